# frozen_string_literal: true

class SessionsController < ApplicationController
  # GET /login: the login form, with the session's authenticity token in a
  # hidden field (and in the layout's csrf-token meta tag).
  def new; end

  # POST /login (authenticity_token=...&user=author1&password=secret): the
  # token is checked first (422 without it or with another session's);
  # then, as a real app does, a new session against session fixation, and
  # a 303 to the list; 401 for a wrong user or password.
  def create
    author = Author.find_by(name: params[:user].to_s)
    unless author && ActiveSupport::SecurityUtils.secure_compare(params[:password].to_s, PostsDb::PASSWORD)
      return render plain: "unknown user or wrong password\n", status: :unauthorized
    end

    reset_session
    session[:author_id] = author.id
    redirect_to posts_path, status: :see_other
  end
end
