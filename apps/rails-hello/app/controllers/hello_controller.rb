# frozen_string_literal: true

class HelloController < ActionController::Base
  BODY = "Hello, World!"

  def index
    render plain: BODY
  end
end
