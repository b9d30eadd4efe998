# frozen_string_literal: true

class Reply < ApplicationRecord
  MAX_LENGTH = 2000

  belongs_to :post, counter_cache: true
  belongs_to :author

  validates :body, presence: true, length: { maximum: MAX_LENGTH }
end
