# frozen_string_literal: true

require_relative "application"

run Rails.application
