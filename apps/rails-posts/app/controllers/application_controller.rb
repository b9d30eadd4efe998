# frozen_string_literal: true

require "openssl"

class ApplicationController < ActionController::Base
  # The login cookie: "<author id>.<HMAC>", 40-odd bytes. Not Rails' cookie
  # session, whose encrypted value (200+ bytes) exceeds what the load
  # engine's cookie jar keeps (128 bytes a cookie, doc/requests.md).
  LOGIN_COOKIE = :rackbench_login

  private

  def login_token(author_id)
    "#{author_id}.#{login_mac(author_id)}"
  end

  # The Author the login cookie names, or nil when it is absent or forged.
  def current_author
    id, mac = cookies[LOGIN_COOKIE].to_s.split(".", 2)
    return nil unless id && mac && ActiveSupport::SecurityUtils.secure_compare(mac, login_mac(id))

    Author.find_by(id: id)
  end

  def login_mac(author_id)
    OpenSSL::HMAC.hexdigest("SHA256", Rails.application.secret_key_base, "login:#{author_id}")[0, 32]
  end

  def bad_request(message)
    render plain: "#{message}\n", status: :bad_request
  end
end
