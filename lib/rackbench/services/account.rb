# frozen_string_literal: true

require "etc"
require "fileutils"

module Rackbench
  module Services
    # The account a service runs as. rackbench started by a user runs its
    # services as that user. Started as root, it runs each under the
    # account Debian's package made for it (postgres, redis, memcache):
    # PostgreSQL refuses to run as root, memcached wants a user to switch
    # to, and none of them needs root. The switch is setpriv's, before the
    # guard, so the guard's parent-death signal is armed under the
    # service's own account (a change of user would clear it).
    class Account
      SETPRIV = "setpriv"

      attr_reader :name, :uid, :gid

      # The Account a service whose package's account is name runs as, or
      # nil to run as this process's user. Raises SetupError when rackbench
      # runs as root and there is no such account.
      #
      # :euid :: this process's effective uid (default: Process.euid; tests pass 0)
      # :title :: the service's name in the error (default: name)
      def self.for(name, euid: Process.euid, title: name)
        return nil unless euid.zero?

        entry = Etc.getpwnam(name)
        new(name: name, uid: entry.uid, gid: entry.gid)
      rescue ArgumentError
        raise SetupError, "#{title} runs as the account #{name} when rackbench runs as root, and there is no such " \
                          "account (Debian's package creates it: bin/setup --all installs it)"
      end

      def initialize(name:, uid:, gid:)
        @name = name
        @uid = uid
        @gid = gid
      end

      # The argv prefix that runs a command as this account, with no
      # supplementary groups.
      def prefix
        setpriv = Proxy::Binary.find(SETPRIV) || SETPRIV
        [setpriv, "--reuid=#{uid}", "--regid=#{gid}", "--clear-groups", "--"]
      end

      # Gives path (and everything under it) to this account.
      def own(path)
        FileUtils.chown_R(uid, gid, path)
      end
    end
  end
end
