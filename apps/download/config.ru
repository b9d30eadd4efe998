# frozen_string_literal: true

require_relative "download_app"

run DownloadApp.new
