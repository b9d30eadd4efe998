# frozen_string_literal: true

# Checks that the engine's C files call each other without a circle: file
# A depends on file B when A's object uses a symbol B's object defines (a
# function or a global, whatever header declared it). The symbols come
# from nm, so a call through any header counts. A circle makes two files
# one unit that cannot be read, tested or replaced apart (STYLE.md: the
# loop shared by the protocols lives in one place and calls them only
# through their worker_protocol table).
#
# Usage: ruby test/c/check_layers.rb OBJECT.o...   (exit 1 and the circle
# on stdout when there is one)

def symbols(object, *flags)
  out = IO.popen(["nm", *flags, object], err: File::NULL, &:read)
  abort "check_layers: nm failed on #{object}" unless $?.success?
  out.lines.filter_map { |line| line.split.last if line.split.size >= 2 }
end

objects = ARGV.to_h { |path| [File.basename(path, ".o"), path] }
abort "check_layers: no objects given" if objects.empty?

defined_by = {}
objects.each do |name, path|
  symbols(path, "--defined-only", "--extern-only").each { |sym| defined_by[sym] = name }
end
uses = objects.to_h do |name, path|
  wanted = symbols(path, "--undefined-only").filter_map { |sym| [defined_by[sym], sym] if defined_by[sym] && defined_by[sym] != name }
  [name, wanted.group_by(&:first).transform_values { |pairs| pairs.map(&:last) }]
end

# Depth-first search; a file met again while still on the path closes a circle.
state = Hash.new(:new)
path = []
visit = lambda do |name|
  state[name] = :open
  path.push(name)
  uses[name].each_key do |dep|
    if state[dep] == :open
      circle = path[path.index(dep)..] + [dep]
      puts "engine files call each other in a circle: #{circle.join(" -> ")}"
      circle.each_cons(2) { |a, b| puts "  #{a} uses #{b}'s #{uses[a][b].first(4).join(", ")}" }
      exit 1
    end
    visit.call(dep) if state[dep] == :new
  end
  path.pop
  state[name] = :done
end
objects.each_key { |name| visit.call(name) if state[name] == :new }
puts "layers: #{objects.size} engine files, no circle"
