# frozen_string_literal: true

require "test_helper"
require "yaml"
require_relative "../../apps/cpu/cpu_app"

# The cpu app computes the real Mandelbrot set: checked point by point
# against a straightforward Complex-number implementation written here.
describe "apps/cpu" do
  # The textbook definition: iterate z = z^2 + c from 0 until |z| > 2.
  def reference_count(c, max_iter)
    z = Complex(0.0, 0.0)
    (1..max_iter).each do |n|
      z = z * z + c
      return n if z.abs2 > 4.0
    end
    max_iter
  end

  it "never lets points of the set escape" do
    [0.0, -1.0, -2.0, Complex(0.0, 1.0), -0.1, 0.25].each do |c|
      c = Complex(c)
      assert_equal Mandelbrot::MAX_ITER, Mandelbrot.escape_count(c.real, c.imag), c
    end
  end

  it "lets points outside escape after the known number of iterations" do
    assert_equal 3, Mandelbrot.escape_count(1.0, 0.0) # 0, 1, 2, 5: |5| > 2 at the third step
    assert_equal 1, Mandelbrot.escape_count(3.0, 0.0)
    assert_equal 1, Mandelbrot.escape_count(0.0, 2.5)
    assert_equal 1, Mandelbrot.escape_count(-2.0, 1.0) # |-2 + i|^2 = 5
    assert_equal 5, Mandelbrot.escape_count(0.5, 0.0) # 0.5, 0.75, 1.0625, 1.6289, 3.1533
    assert_equal reference_count(Complex(0.3, 0.5), 50), Mandelbrot.escape_count(0.3, 0.5)
  end

  it "matches the reference implementation on every grid point" do
    rows = Mandelbrot.grid
    assert_equal [Mandelbrot::HEIGHT, Mandelbrot::WIDTH], [rows.size, rows.first.size]
    rows.each_with_index do |row, y|
      row.each_with_index do |count, x|
        c = Complex(-2.0 + x * (2.5 / 80), -1.0 + y * (2.0 / 32))
        assert_equal reference_count(c, 50), count, "point #{c}"
      end
    end
  end

  it "puts c = -2, -1 and 0 on the grid's middle row, inside the set" do
    middle = Mandelbrot.grid[16]
    assert_equal [50, 50, 50], [middle[0], middle[32], middle[64]]
    assert_operator middle[79], :<, 50 # c = 0.46875 escapes
  end

  it "answers the grid with the checksum the app check expects" do
    status, headers, body = CpuApp.new.call("PATH_INFO" => "/", "QUERY_STRING" => "")
    text = body.join
    assert_equal 200, status
    assert_equal "text/plain; charset=utf-8", headers["content-type"]
    assert_equal text.bytesize.to_s, headers["content-length"]
    expected = YAML.safe_load(File.read(File.expand_path("../../apps/cpu/app.yml", __dir__)))["expect_body"]
    assert_includes text, expected
    assert_equal 1 + Mandelbrot::HEIGHT, text.lines.size
    assert_equal "@" * 73, text.lines[17][0, 73] # the real axis from -2 to 0.25
  end

  it "serves a health path and nothing else" do
    assert_equal 200, CpuApp.new.call("PATH_INFO" => "/up").first
    assert_equal 404, CpuApp.new.call("PATH_INFO" => "/other").first
  end
end
