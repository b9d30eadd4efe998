# The JSON writer of rackbench's agents (identity.rb, inside.rb), which run
# inside the measured servers under every benchmarked ruby: no gem (an app
# might not load json, and loading it would change what is measured), and
# code that parses on old rubies (JRuby 9.x is Ruby 2.5/2.6).
module RackbenchPlainJson
  module_function

  # JSON text of a Hash, Array, String, Symbol, Integer, Float (null when
  # not finite), true, false or nil; anything else as its to_s string.
  def generate(value)
    case value
    when Hash then "{" + value.map { |k, v| "#{generate(k.to_s)}:#{generate(v)}" }.join(",") + "}"
    when Array then "[" + value.map { |v| generate(v) }.join(",") + "]"
    when Integer, true, false then value.to_s
    when Float then value.finite? ? value.to_s : "null"
    when nil then "null"
    else string(value.to_s)
    end
  end

  def string(text)
    body = text.encode("UTF-8", invalid: :replace, undef: :replace).gsub(/["\\\u0000-\u001f]/) do |char|
      case char
      when '"' then '\\"'
      when "\\" then "\\\\"
      when "\n" then "\\n"
      else format("\\u%04x", char.ord)
      end
    end
    "\"#{body}\""
  end
end
