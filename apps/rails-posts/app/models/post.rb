# frozen_string_literal: true

class Post < ApplicationRecord
  belongs_to :author
  has_many :replies

  scope :newest_first, -> { order(published_at: :desc, id: :desc) }
end
