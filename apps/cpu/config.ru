# frozen_string_literal: true

require_relative "cpu_app"

run CpuApp.new
