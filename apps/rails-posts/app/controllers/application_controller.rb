# frozen_string_literal: true

class ApplicationController < ActionController::Base
  # Forgery protection is on, as Rails' defaults set it for every
  # controller (load_defaults: default_protect_from_forgery): a POST must
  # carry the session's authenticity token (a form's hidden field or the
  # page's csrf-token meta tag), or it fails with 422. The session itself
  # is Rails' encrypted cookie session (a few hundred bytes, within what
  # the load engine's cookie jar keeps: 4096 bytes a cookie).
  helper_method :current_author

  private

  # The logged-in Author, or nil.
  def current_author
    return @current_author if defined?(@current_author)

    @current_author = session[:author_id] && Author.find_by(id: session[:author_id])
  end

  def bad_request(message)
    render plain: "#{message}\n", status: :bad_request
  end
end
