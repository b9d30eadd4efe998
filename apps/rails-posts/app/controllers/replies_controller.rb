# frozen_string_literal: true

class RepliesController < ApplicationController
  # See SessionsController: no CSRF token to replay; the login cookie is
  # what authorizes a reply.
  skip_forgery_protection

  # POST /posts/:post_id/replies (body=...): adds a reply by the logged-in
  # author and redirects to the post; 401 without a valid login cookie,
  # 422 for an empty or too long body.
  def create
    author = current_author
    return render plain: "log in first (POST /login)\n", status: :unauthorized unless author

    post = Post.find(params[:post_id])
    reply = post.replies.new(author: author, body: params[:body].to_s)
    return render plain: "#{reply.errors.full_messages.join(", ")}\n", status: :unprocessable_entity unless reply.save

    redirect_to post_path(post), status: :see_other
  end
end
