# frozen_string_literal: true

class PostsController < ApplicationController
  DEFAULT_COUNT = 20
  MAX_COUNT = 1000
  REPLIES_SHOWN = 20

  # GET /posts?n=20 (HTML) and /posts.json?n=20: the newest n posts with
  # their authors, two queries whatever n.
  def index
    count = post_count
    return bad_request("n must be an integer from 1 to #{MAX_COUNT}") unless count

    @posts = Post.newest_first.includes(:author).limit(count).to_a
    respond_to do |format|
      format.html
      format.json { render json: @posts.map { |post| summary(post) } }
    end
  end

  # GET /posts/:id: a post with its newest replies (a bounded number, so the
  # page does not grow as a session mix adds replies).
  def show
    @post = Post.includes(:author).find(params[:id])
    @replies = @post.replies.includes(:author).order(id: :desc).limit(REPLIES_SHOWN).to_a
  end

  private

  # params[:n] as an Integer in 1..MAX_COUNT, DEFAULT_COUNT when absent,
  # nil when invalid.
  def post_count
    return DEFAULT_COUNT unless params.key?(:n)

    count = Integer(params[:n].to_s, 10)
    count if count.between?(1, MAX_COUNT)
  rescue ArgumentError
    nil
  end

  def summary(post)
    { id: post.id, title: post.title, author: post.author.name, published_at: post.published_at.iso8601,
      replies: post.replies_count, body: post.body }
  end
end
