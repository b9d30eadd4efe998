# frozen_string_literal: true

require_relative "errors_app"

run ErrorsApp.new
