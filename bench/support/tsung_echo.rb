# frozen_string_literal: true

# Tsung's side of the WebSocket echo benchmarks (bench/ws_peers.rb,
# bench/ws_wire_rtt.rb): its configuration for N users that each connect
# to /echo and send M messages, each message in an "rt" transaction (the
# round trip Tsung times), the users started at once (1,000 a second).
module TsungEcho
  # A 64-byte text message, as the engine's default.
  BODY = '{"rb_seq":1,"rb_t":1,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}'

  module_function

  def config(port:, users:, messages:)
    <<~XML
      <?xml version="1.0"?>
      <!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd" []>
      <tsung loglevel="notice" version="1.0">
        <clients><client host="localhost" use_controller_vm="true" maxusers="1000"/></clients>
        <servers><server host="127.0.0.1" port="#{port}" type="tcp"/></servers>
        <load><arrivalphase phase="1" duration="1" unit="second">
          <users maxnumber="#{users}" arrivalrate="1000" unit="second"/></arrivalphase></load>
        <sessions><session name="websocket" probability="100" type="ts_websocket">
          <request><websocket type="connect" path="/echo"></websocket></request>
          <for from="1" to="#{messages}" incr="1" var="i">
            <transaction name="rt"><request><websocket type="message">#{BODY}</websocket></request></transaction>
          </for>
        </session></sessions>
      </tsung>
    XML
  end
end
