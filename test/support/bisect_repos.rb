# frozen_string_literal: true

require "fileutils"
require "open3"

module Rackbench
  module Test
    # Git repositories made for the bisection's tests and proofs, commit by
    # commit, with fixed authors and dates: the same history has the same
    # commit hashes on every machine and every run (so a ruby built from
    # one of its commits is found in the build cache the next time).
    module BisectRepos
      AUTHOR = { "GIT_AUTHOR_NAME" => "Rackbench Test", "GIT_AUTHOR_EMAIL" => "test@rackbench.invalid",
                 "GIT_COMMITTER_NAME" => "Rackbench Test", "GIT_COMMITTER_EMAIL" => "test@rackbench.invalid" }.freeze
      # The first commit's date; each later commit is a minute after the last.
      EPOCH = 1_780_000_000

      module_function

      # Runs git in +dir+; raises with its output when it fails.
      def git(dir, *args, env: {})
        out, status = Open3.capture2e({ "LC_ALL" => "C", "GIT_CONFIG_NOSYSTEM" => "1", "HOME" => dir }.merge(env),
                                      "git", "-C", dir, *args)
        raise "git #{args.join(" ")} in #{dir} failed: #{out}" unless status.success?

        out
      end

      # Makes +dir+ a repository (branch main) whose first commit holds
      # what +dir+ holds now.
      def init(dir, subject: "Initial commit")
        git(dir, "init", "--quiet", "--initial-branch=main")
        commit(dir, subject, 0)
      end

      # Commits everything in +dir+ as commit number +number+ (its date);
      # returns its hash.
      def commit(dir, subject, number)
        date = "@#{EPOCH + 60 * number} +0000"
        git(dir, "add", "--all", ".")
        git(dir, "commit", "--quiet", "--allow-empty", "--no-verify", "--no-gpg-sign", "-m", subject,
            env: AUTHOR.merge("GIT_AUTHOR_DATE" => date, "GIT_COMMITTER_DATE" => date))
        git(dir, "rev-parse", "HEAD").strip
      end

      # A repository at +dir+ (made) whose branch main holds one commit per
      # entry of +snapshots+, oldest first: [subject, {path => content}],
      # each the whole tree of its commit. Written in one `git
      # fast-import` (64 commits in a fraction of a second, where `git
      # commit` takes a tenth of a second each on a loaded machine), then
      # checked out. Returns the hashes, oldest first.
      def import(dir, snapshots)
        FileUtils.mkdir_p(dir)
        git(dir, "init", "--quiet", "--initial-branch=main")
        stream = +""
        snapshots.each_with_index do |(subject, files), number|
          date = "#{EPOCH + 60 * number} +0000"
          who = "#{AUTHOR["GIT_AUTHOR_NAME"]} <#{AUTHOR["GIT_AUTHOR_EMAIL"]}> #{date}"
          stream << "commit refs/heads/main\nmark :#{number + 1}\nauthor #{who}\ncommitter #{who}\n"
          stream << "data #{subject.bytesize}\n#{subject}\n"
          stream << "from :#{number}\n" if number.positive?
          stream << "deleteall\n"
          files.sort.each do |path, content|
            stream << "M 100644 inline #{path}\ndata #{content.bytesize}\n#{content}\n"
          end
          stream << "\n"
        end
        out, status = Open3.capture2e({ "LC_ALL" => "C", "GIT_CONFIG_NOSYSTEM" => "1", "HOME" => dir },
                                      "git", "-C", dir, "fast-import", "--quiet", stdin_data: stream)
        raise "git fast-import in #{dir} failed: #{out}" unless status.success?

        git(dir, "checkout", "--quiet", "--force", "main")
        commits(dir)
      end

      # The C files the Ruby history's harmless commits touch, in turn.
      RUBY_FILES = %w[array.c string.c numeric.c object.c range.c struct.c time.c enum.c proc.c symbol.c].freeze
      # Where the Ruby history's costly commit adds its cost: the first
      # line of rb_hash_aset's body in 3.4.5's hash.c (every Hash#[]= and
      # every header a server puts into a Rack env), as the test patch
      # ruby-3.4-slow-hash-aset.patch does.
      HASH_ASET = "rb_hash_aset(VALUE hash, VALUE key, VALUE val)\n{\n    bool iter_p = hash_iterating_p(hash);\n"

      # A Ruby repository at +dir+ made from a release +tarball+ (commit
      # 0, every file of it, ignored or not), then +commits+ commits each
      # appending a comment to a C file (RUBY_FILES in turn): commit
      # +broken_at+ also adds an #error to dir.c (its build fails at make),
      # which the next commit takes out; commit +cost_at+ adds a loop of
      # +spins+ iterations to rb_hash_aset, which every later commit keeps.
      # Returns the hashes, commit 0 first.
      def ruby_history(dir, tarball:, commits: 24, cost_at: 17, broken_at: 9, spins: 100)
        FileUtils.mkdir_p(dir)
        out, status = Open3.capture2e("tar", "-xf", tarball, "-C", dir, "--strip-components=1")
        raise "cannot unpack #{tarball}: #{out}" unless status.success?

        git(dir, "init", "--quiet", "--initial-branch=main")
        git(dir, "add", "--all", "--force", ".")
        ruby_commit(dir, "Ruby #{File.basename(tarball)[/\d+\.\d+\.\d+/]}, its release tarball", 0)
        (1..commits).each do |number|
          file = File.join(dir, RUBY_FILES[(number - 1) % RUBY_FILES.size])
          File.write(file, "/* rackbench bisect proof: commit #{number} */\n", mode: "a")
          changed = [file]
          dir_c = File.join(dir, "dir.c")
          if number == broken_at
            File.write(dir_c, "#error \"rackbench bisect proof: commit #{number} breaks the build\"\n", mode: "a")
            changed << dir_c
          elsif number == broken_at + 1
            File.write(dir_c, File.read(dir_c).sub(/^#error "rackbench bisect proof: .*\n\z/, ""))
            changed << dir_c
          end
          if number == cost_at
            hash_c = File.join(dir, "hash.c")
            text = File.read(hash_c)
            raise "#{hash_c} has no rb_hash_aset as 3.4.5's" unless text.include?(HASH_ASET)

            File.write(hash_c, text.sub(HASH_ASET, "#{HASH_ASET}\n    /* rackbench bisect proof: a fixed cost on every Hash#[]= */\n" \
                                                   "    for (volatile int spin = 0; spin < #{spins}; spin++) ;\n"))
            changed << hash_c
          end
          git(dir, "add", "--force", *changed)
          subject = if number == cost_at then "Commit #{number}: a loop of #{spins} in rb_hash_aset"
                    elsif number == broken_at then "Commit #{number}: an #error in dir.c"
                    else "Commit #{number}: a comment in #{File.basename(file)}"
                    end
          ruby_commit(dir, subject, number)
        end
        commits(dir)
      end

      def ruby_commit(dir, subject, number)
        date = "@#{EPOCH + 60 * number} +0000"
        git(dir, "commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", subject,
            env: AUTHOR.merge("GIT_AUTHOR_DATE" => date, "GIT_COMMITTER_DATE" => date))
      end

      # The hashes of main's commits, oldest first.
      def commits(dir)
        git(dir, "rev-list", "--reverse", "main").split
      end

      # A Rack app whose every request runs +iterations+ block calls
      # (about 500 instructions each on Ruby 3.1: the page's cost is
      # mostly its own, and a change of it shows in instructions per
      # request far above their noise). Writes config.ru, lib/work.rb and
      # a Gemfile (the server brings Rack) into +dir+.
      def write_app(dir, iterations:, revision: 0, broken: false)
        FileUtils.mkdir_p(File.join(dir, "lib"))
        File.write(File.join(dir, "Gemfile"), "source \"https://rubygems.org\"\n")
        File.write(File.join(dir, "config.ru"), <<~RUBY)
          require_relative "lib/work"
          #{broken ? "raise \"broken on purpose: this commit does not boot\"\n" : ""}run ->(_env) { [200, { "content-type" => "text/plain" }, [Work.page]] }
        RUBY
        File.write(File.join(dir, "lib", "work.rb"), <<~RUBY)
          # Revision #{revision}: what changes from commit to commit is this
          # comment, unless a commit changes the work below.
          module Work
            ITERATIONS = #{iterations}

            def self.page
              sum = 0
              ITERATIONS.times { |i| sum += i * 3 }
              "Hello, bisect! \#{sum}\\n"
            end
          end
        RUBY
      end

      # An app repository at +dir+: commit 0 with +iterations+ per request,
      # then +commits+ commits, commit N adding +steps[N]+ iterations (to
      # every later commit too), commits in +broken+ raising at boot (the
      # next one fixes it). Returns the hashes, commit 0 first.
      def app_history(dir, commits:, iterations:, steps: {}, broken: [])
        FileUtils.mkdir_p(dir)
        write_app(dir, iterations: iterations)
        init(dir, subject: "The app, #{iterations} iterations a request")
        (1..commits).each do |number|
          iterations += steps.fetch(number, 0)
          write_app(dir, iterations: iterations, revision: number, broken: broken.include?(number))
          subject = if steps.key?(number) then "Commit #{number}: #{steps[number]} more iterations a request"
                    elsif broken.include?(number) then "Commit #{number}: a typo that breaks the boot"
                    else "Commit #{number}: reword a comment"
                    end
          commit(dir, subject, number)
        end
        commits(dir)
      end
    end
  end
end
