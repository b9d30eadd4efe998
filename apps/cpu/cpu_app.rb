# frozen_string_literal: true

require_relative "mandelbrot"

# cpu: pure Ruby computation per request (the Mandelbrot grid, ~52,000
# iterations of float arithmetic), nothing to wait for. Under CRuby's GVL
# extra threads of one process cannot make it faster; processes can.
class CpuApp
  HEADERS = { "content-type" => "text/plain; charset=utf-8" }.freeze # merged into a new Hash per response
  HEALTH = "ok\n"

  def call(env)
    return [200, { "content-type" => "text/plain" }, [HEALTH]] if env["PATH_INFO"] == "/up"
    return [404, { "content-type" => "text/plain" }, ["not found\n"]] unless env["PATH_INFO"] == "/"

    body = Mandelbrot.render
    [200, HEADERS.merge("content-length" => body.bytesize.to_s), [body]]
  end
end
