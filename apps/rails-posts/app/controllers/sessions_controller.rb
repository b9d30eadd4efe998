# frozen_string_literal: true

class SessionsController < ApplicationController
  # No CSRF token: the load engine replays fixed requests and cannot carry
  # a per-session token, and the app serves no forms to take one from.
  # The login cookie is SameSite=Lax, which keeps other sites' POSTs from
  # carrying it; this is a benchmark fixture, not an app to deploy.
  skip_forgery_protection

  # POST /login (user=author1&password=secret): sets the login cookie and
  # redirects to the list, as a browser's login form would; 401 otherwise.
  def create
    author = Author.find_by(name: params[:user].to_s)
    unless author && ActiveSupport::SecurityUtils.secure_compare(params[:password].to_s, PostsDb::PASSWORD)
      return render plain: "unknown user or wrong password\n", status: :unauthorized
    end

    cookies[LOGIN_COOKIE] = { value: login_token(author.id), httponly: true, same_site: :lax }
    redirect_to posts_path, status: :see_other
  end
end
