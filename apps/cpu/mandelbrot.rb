# frozen_string_literal: true

# The Mandelbrot set on a fixed grid, in plain Ruby: the iteration
# z -> z^2 + c from z = 0, counted until |z| > 2 (escape) or max_iter.
#
# The grid is chosen so that its points are exact binary fractions: 80
# columns over [-2, 0.5) (step 1/32) and 32 rows over [-1, 1) (step 1/16),
# so c = -2, -1 and 0 are grid points and the result is the same on every
# platform (no rounding in the coordinates themselves).
module Mandelbrot
  WIDTH = 80
  HEIGHT = 32
  X_MIN = -2.0
  X_STEP = 2.5 / WIDTH
  Y_MIN = -1.0
  Y_STEP = 2.0 / HEIGHT
  MAX_ITER = 50
  # Characters of the ASCII rendering, from quick escape to never.
  SHADES = " .:-=+*#%@"

  module_function

  # The number of iterations after which z first has |z|^2 > 4, or
  # max_iter when it never does (c is taken to be in the set).
  def escape_count(c_re, c_im, max_iter = MAX_ITER)
    z_re = 0.0
    z_im = 0.0
    n = 0
    while n < max_iter
      # Both parts from the old z: the imaginary part must not see the new
      # real part (the bug that makes "mandelbrots" that are not).
      z_re, z_im = z_re * z_re - z_im * z_im + c_re, 2.0 * z_re * z_im + c_im
      n += 1
      return n if z_re * z_re + z_im * z_im > 4.0
    end
    max_iter
  end

  # Escape counts of the whole grid, row by row from the top (y = -1),
  # each row from x = -2: an Array of HEIGHT Arrays of WIDTH Integers.
  def grid
    Array.new(HEIGHT) do |row|
      c_im = Y_MIN + row * Y_STEP
      Array.new(WIDTH) { |col| escape_count(X_MIN + col * X_STEP, c_im) }
    end
  end

  # A position-weighted sum of the counts (count x its 1-based index in
  # row-major order), so that a transposed or shifted grid does not give
  # the same number as the right one.
  def checksum(rows)
    rows.flatten.each_with_index.sum { |count, i| count * (i + 1) }
  end

  # The text body: a header line with the checksum, then the grid drawn
  # with SHADES (@ for points that never escaped).
  def render(rows = grid)
    inside = rows.sum { |row| row.count(MAX_ITER) }
    header = "mandelbrot #{WIDTH}x#{HEIGHT} x=[-2,0.5) y=[-1,1) max_iter=#{MAX_ITER} " \
             "inside=#{inside} checksum=#{checksum(rows)}\n"
    picture = rows.map { |row| "#{row.map { |count| shade(count) }.join}\n" }.join
    header + picture
  end

  def shade(count)
    return SHADES[-1] if count >= MAX_ITER

    SHADES[(count * (SHADES.size - 1)) / MAX_ITER]
  end
end
