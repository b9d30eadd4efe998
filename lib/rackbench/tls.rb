# frozen_string_literal: true

require "fileutils"
require "openssl"

module Rackbench
  # What `load.tls: true` needs besides the engine: a certificate for the
  # servers, made at run time (never a key in a repository).
  module Tls
    # A certificate authority of the run's own and a server certificate it
    # signed, for 127.0.0.1 and localhost, as PEM files in one directory:
    #
    #   ca.pem, ca.key          the authority the load engine and the probes trust (--cacert)
    #   server.pem, server.key  what the servers present
    #
    # An authority and a leaf rather than one self-signed certificate: the
    # client checks a chain, as against a real site, and Falcon's loader
    # (the localhost gem) wants an issuer beside the certificate. RSA 2048
    # keys: what most sites serve, and the only kind that loader reads.
    Certificate = Struct.new(:dir, keyword_init: true) do
      def ca_path = File.join(dir, "ca.pem")
      def ca_key_path = File.join(dir, "ca.key")
      def cert_path = File.join(dir, "server.pem")
      def key_path = File.join(dir, "server.key")

      # The server certificate's SHA-256 fingerprint (hex): what a trial
      # records of the certificate it was served with.
      def fingerprint
        OpenSSL::Digest::SHA256.hexdigest(OpenSSL::X509::Certificate.new(File.read(cert_path)).to_der)
      end
    end

    # How long a made certificate is valid, and how much of that must be
    # left for it to be used again (a resumed run reuses its directory).
    VALIDITY_S = 30 * 86_400
    MIN_LEFT_S = 86_400
    HOSTS = ["IP:127.0.0.1", "DNS:localhost"].freeze

    module_function

    # The certificate in dir, made there first when it is missing, unreadable
    # or close to its end. Returns a Certificate. Raises SetupError when
    # the directory cannot be written.
    def certificate(dir)
      cert = Certificate.new(dir: File.expand_path(dir))
      make(cert) unless usable?(cert)
      cert
    rescue SystemCallError => e
      raise SetupError, "cannot write the TLS certificate into #{dir}: #{e.message}"
    end

    def usable?(cert)
      paths = [cert.ca_path, cert.ca_key_path, cert.cert_path, cert.key_path]
      return false unless paths.all? { |path| File.file?(path) }

      leaf = OpenSSL::X509::Certificate.new(File.read(cert.cert_path))
      OpenSSL::PKey.read(File.read(cert.key_path))
      leaf.not_after - Time.now > MIN_LEFT_S
    rescue OpenSSL::OpenSSLError
      false
    end

    def make(cert)
      FileUtils.mkdir_p(cert.dir, mode: 0o700)
      ca_key = OpenSSL::PKey::RSA.generate(2048)
      ca = build(subject: "/CN=rackbench local CA", key: ca_key, issuer: nil, issuer_key: ca_key, serial: 1,
                 extensions: [["basicConstraints", "CA:TRUE", true], ["keyUsage", "keyCertSign, cRLSign", true]])
      key = OpenSSL::PKey::RSA.generate(2048)
      leaf = build(subject: "/CN=127.0.0.1", key: key, issuer: ca, issuer_key: ca_key, serial: 2,
                   extensions: [["basicConstraints", "CA:FALSE", true],
                                ["keyUsage", "digitalSignature, keyEncipherment", true],
                                ["extendedKeyUsage", "serverAuth", false],
                                ["subjectAltName", HOSTS.join(","), false]])
      write(cert.ca_key_path, ca_key.to_pem, 0o600)
      write(cert.key_path, key.to_pem, 0o600)
      write(cert.ca_path, ca.to_pem, 0o644)
      write(cert.cert_path, leaf.to_pem, 0o644)
    end

    def build(subject:, key:, issuer:, issuer_key:, serial:, extensions:)
      cert = OpenSSL::X509::Certificate.new
      cert.version = 2 # X.509 v3: extensions
      cert.serial = serial
      cert.subject = OpenSSL::X509::Name.parse(subject)
      cert.issuer = issuer ? issuer.subject : cert.subject
      cert.public_key = key
      cert.not_before = Time.now - 3600 # a clock a little behind still accepts it
      cert.not_after = Time.now + VALIDITY_S
      factory = OpenSSL::X509::ExtensionFactory.new
      factory.subject_certificate = cert
      factory.issuer_certificate = issuer || cert
      extensions.each { |name, value, critical| cert.add_extension(factory.create_extension(name, value, critical)) }
      cert.add_extension(factory.create_extension("subjectKeyIdentifier", "hash", false))
      cert.sign(issuer_key, OpenSSL::Digest.new("SHA256"))
      cert
    end

    # Written whole or not at all: a crash never leaves half a key.
    def write(path, text, mode)
      tmp = "#{path}.tmp"
      File.open(tmp, File::WRONLY | File::CREAT | File::TRUNC, mode) { |f| f.write(text) }
      File.rename(tmp, path)
    end

    private_class_method :usable?, :make, :build, :write
  end
end
