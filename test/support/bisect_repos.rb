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
