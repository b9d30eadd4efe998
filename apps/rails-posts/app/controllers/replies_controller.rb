# frozen_string_literal: true

class RepliesController < ApplicationController
  # POST /posts/:post_id/replies (authenticity_token=...&body=...): adds a
  # reply by the logged-in author and redirects to the post; 422 without
  # the session's token, 401 when not logged in, 422 for an empty or too
  # long body.
  def create
    author = current_author
    return render plain: "log in first (GET /login)\n", status: :unauthorized unless author

    post = Post.find(params[:post_id])
    reply = post.replies.new(author: author, body: params[:body].to_s)
    return render plain: "#{reply.errors.full_messages.join(", ")}\n", status: :unprocessable_entity unless reply.save

    redirect_to post_path(post), status: :see_other
  end
end
