# How rackbench's agents (identity.rb, inside.rb, profile.rb) leave a file
# for the runner in the trial's directory: written beside it, then renamed,
# so the runner, which polls for it, reads it whole or not at all. Runs
# inside the measured servers: no gem, parses on old rubies, never raises.
module RackbenchWholeFile
  module_function

  # Writes +content+ to +path+ whole (binary when +binary+); true when it
  # did, false after a warning on stderr naming +agent+ ("identity", ...).
  def write(path, content, agent:, binary: false)
    tmp = "#{path}.#{Process.pid}.tmp"
    File.open(tmp, binary ? "wb" : "w") { |file| file.write(content) }
    File.rename(tmp, path)
    true
  rescue StandardError => e
    warn "rackbench #{agent}: cannot write #{path}: #{e.class}: #{e.message}"
    false
  end
end
