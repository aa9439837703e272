import Foundation
import KernelTesting
import SampleApi
import Testing

/// `kernel serve` as a process under the limits a busy machine puts on it.
@Suite(.timeLimit(.minutes(5))) struct ServeTests {
  /// A script that starts `kernel serve` with `options` on a free port, runs `body` with `$api`
  /// its base URL, and stops the server with Ctrl-C; `$pid` is the server's.
  static func serving(_ options: String, _ body: String) -> String {
    """
    "$KERNEL" serve --port 0 \(options) > out 2> err &
    pid=$!
    for i in $(seq 200); do grep -q http out 2>/dev/null && break; sleep 0.05; done
    api="http://127.0.0.1:$(sed -E 's/.*127.0.0.1:([0-9]+).*/\\1/;q' out)/api"
    \(body)
    kill -INT $pid; wait $pid
    """
  }

  /// With its descriptors used up, the accept loop ended for good and the server answered
  /// nothing ever again. It now holds no more connections than its descriptors allow, says why
  /// once, and takes the waiting ones as others close.
  @Test func runningOutOfDescriptorsPausesAcceptingAndSaysWhyOnce() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.shell(
      #"""
      limit=$(( $(ls /proc/self/fd | wc -l) + 36 ))
      prlimit --nofile=$limit:$limit "$KERNEL" serve --port 0 > out 2> err &
      pid=$!
      for i in $(seq 200); do grep -q http out 2>/dev/null && break; sleep 0.05; done
      port=$(sed -E 's/.*127.0.0.1:([0-9]+).*/\1/;q' out)
      fds=()
      for i in $(seq 60); do exec {fd}<>/dev/tcp/127.0.0.1/$port; fds+=($fd); done
      sleep 0.5
      for fd in "${fds[@]}"; do exec {fd}>&-; done
      curl -s -m 10 "http://127.0.0.1:$port/api/movies/1"; echo
      curl -s -m 10 "http://127.0.0.1:$port/api/movies/2"; echo
      kill -INT $pid; wait $pid
      cat err >&2
      """#)
    #expect(run.stdout.contains("Finding Dory"), "\(run)")
    #expect(run.stdout.contains("Rogue One"), "\(run)")
    let warnings = run.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
    #expect(warnings.count == 1, "\(run)")
    #expect(warnings.first?.contains("as many as its descriptors allow") == true, "\(run)")
    let tooFew = try await kernel.shell(#"prlimit --nofile=12:12 "$KERNEL" serve --port 0"#)
    #expect(tooFew.status == 69, "\(tooFew)")
    #expect(tooFew.stderr.contains("it needs at least"), "\(tooFew)")
  }

  /// Ranges as RFC 9110 reads them: `bytes=10-20` is those 11 bytes, not the rest of the file;
  /// a last byte before the first or a sign is not a range (the whole body, 200); past the end
  /// is 416; HEAD answers as GET does, without the body.
  @Test func rangesFollowRFC9110AndHEADAnswersAsGETWithoutTheBody() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.shell(
      Self.serving(
        "--poster-bytes 1000",
        #"""
        url="$api/movies/3/poster"
        for range in bytes=10-20 bytes=5-3 bytes=+5- bytes=-100 bytes=990-5000 bytes=1000- bytes=-0; do
          printf '%s %s\n' "$range" "$(curl -s -m 10 -o body -w '%{http_code} %{size_download}' -H "Range: $range" "$url")"
          [ "$range" = bytes=10-20 ] && od -An -tu1 body | tr -s ' ' | sed 's/^ //' > part
        done
        printf 'HEAD %s\n' "$(curl -s -m 10 -I -o head -w '%{http_code}' "$url")"
        grep -i '^content-length' head | tr -d '\r'
        """#))
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.contains("bytes=10-20 206 11"), "\(run)")
    #expect(lines.contains("bytes=5-3 200 1000"), "\(run)")
    #expect(lines.contains("bytes=+5- 200 1000"), "\(run)")
    #expect(lines.contains("bytes=-100 206 100"), "\(run)")
    #expect(lines.contains("bytes=990-5000 206 10"), "\(run)")
    #expect(lines.contains("bytes=1000- 416 0"), "\(run)")
    #expect(lines.contains("bytes=-0 416 0"), "\(run)")
    #expect(lines.contains("HEAD 200"), "\(run)")
    #expect(lines.contains { $0.lowercased() == "content-length: 1000" }, "\(run)")
    let part = try String(
      contentsOf: kernel.workingDirectory.appendingPathComponent("part"), encoding: .utf8)
    let expected = (10...20).map { String(SampleRange.byte(at: $0, of: 3)) }.joined(separator: " ")
    #expect(part.trimmingCharacters(in: .whitespacesAndNewlines) == expected)
  }
}

extension ServeTests {
  /// Posters are made as they are sent: three GETs at once of a 256 MB poster keep `serve`'s
  /// peak memory far below one poster (it made each whole: three of 512 MB peaked at 2.2 GB).
  @Test func aLargePosterIsServedInBoundedMemory() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.shell(
      Self.serving(
        "--poster-bytes 268435456",
        #"""
        fetches=()
        for id in 1 2 3; do
          curl -s -m 120 -o /dev/null -w '%{http_code} %{size_download}\n' \
            "$api/movies/$id/poster" > "fetch-$id" &
          fetches+=($!)
        done
        wait "${fetches[@]}"
        cat fetch-1 fetch-2 fetch-3
        awk '/^VmHWM/ { print "peak_kb " $2 }' /proc/$pid/status
        """#))
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0 == "200 268435456" }.count == 3, "\(run)")
    let peak = lines.first { $0.hasPrefix("peak_kb ") }.flatMap { Int($0.dropFirst(8)) }
    #expect((peak ?? .max) < 128 << 10, "\(run)")
  }
}

/// `doctor` as the system it runs on lets it be.
@Suite(.timeLimit(.minutes(5))) struct DoctorTests {
  /// libcurl hidden in a mount namespace of the run's own (an empty file bound over it):
  /// `doctor` said all was well; it now loads the transport the environment needs.
  @Test func doctorFailsWhenLibcurlCannotBeLoaded() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.shell(
      #"""
      library=$(readlink -f /usr/lib/x86_64-linux-gnu/libcurl.so.4 2>/dev/null || readlink -f /usr/lib/aarch64-linux-gnu/libcurl.so.4)
      "$KERNEL" --environment local doctor >/dev/null; echo "with $?"
      unshare -m sh -c "mount --bind /dev/null '$library' && exec \"\$KERNEL\" --environment local doctor"
      echo "without $?"
      """#)
    #expect(run.stdout.contains("with 0"), "\(run)")
    #expect(run.stdout.contains("without 69"), "\(run)")
    #expect(
      run.stdout.contains(
        "FAIL  transport: Requests to environment local cannot be sent: libcurl.so.4 could not be loaded"
      ), "\(run)")
    #expect(run.stderr.contains("install libcurl"), "\(run)")
  }
}
