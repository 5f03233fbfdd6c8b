using System;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Falconet.Buffers;
using Falconet.Http;
using Falconet.Http.Http1;
using Microsoft.Extensions.Logging.Abstractions;

namespace Falconet.Benchmarks;

/// <summary>
/// The whole HTTP/1.1 request path of one connection without a kernel or a transport: the connection loop, the parser,
/// the header collections, the application (the TechEmpower plaintext endpoint, as the sample writes it), the response
/// head and body, and the send of each read batch, over an in-memory connection that receives batches of
/// <see cref="Depth"/> TechEmpower requests (as wrk sends them) and throws the responses away. What it measures is the
/// server's own user time per request, the share the load harness cannot separate from the kernel's.
/// </summary>
[MemoryDiagnoser]
public class ConnectionLoopBenchmarks
{
    /// <summary>Batches each connection receives before the client closes: the connection's set-up is spread over all of them.</summary>
    public const int BatchesPerConnection = 1000;

    private ConnectionLoop _loop = null!;

    /// <summary>Requests per read batch: 16 as TechEmpower's pipelined plaintext, 1 without pipelining.</summary>
    [Params(1, 16)]
    public int Depth { get; set; }

    [GlobalSetup]
    public void Setup() => _loop = new ConnectionLoop(Depth, "/plaintext");

    /// <summary>One connection of <see cref="BatchesPerConnection"/> batches.</summary>
    [Benchmark(OperationsPerInvoke = BatchesPerConnection)]
    public long Connection() => _loop.RunConnection();

    /// <summary>
    /// <c>--connection-loop DEPTH PATH SECONDS</c>: runs connections for about SECONDS in rounds of 0.2 s and prints the
    /// nanoseconds per request of the fastest and the median round, and the bytes allocated per request. Meant for
    /// interleaved A/B runs of two builds (run one, then the other, several times) and for a profiler.
    /// </summary>
    public static void RunRounds(int depth, string path, double seconds)
    {
        var loop = new ConnectionLoop(depth, path);
        long checksum = 0;
        // Warm up until tier-1 code everywhere on the path.
        var warmUp = System.Diagnostics.Stopwatch.StartNew();
        while (warmUp.Elapsed < TimeSpan.FromSeconds(3))
        {
            checksum += loop.RunConnection();
        }

        int rounds = Math.Max(3, (int)(seconds / 0.2));
        var perRequest = new double[rounds];
        long allocated = 0;
        long requests = 0;
        for (int round = 0; round < rounds; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            long start = System.Diagnostics.Stopwatch.GetTimestamp();
            long roundRequests = 0;
            while (System.Diagnostics.Stopwatch.GetElapsedTime(start) < TimeSpan.FromSeconds(0.2))
            {
                checksum += loop.RunConnection();
                roundRequests += (long)depth * BatchesPerConnection;
            }

            perRequest[round] = System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalNanoseconds / roundRequests;
            allocated += GC.GetAllocatedBytesForCurrentThread() - before;
            requests += roundRequests;
        }

        Array.Sort(perRequest);
        Console.WriteLine(FormattableString.Invariant(
            $"depth={depth} path={path} rounds={rounds} fastest_ns_per_request={perRequest[0]:F1} median_ns_per_request={perRequest[rounds / 2]:F1} allocated_bytes_per_request={(double)allocated / requests:F3} checksum={checksum}"));
    }

    /// <summary>
    /// <c>--connection-loop-count DEPTH PATH WARMUP MEASURED</c>: runs WARMUP connections, prints "ready" and waits for a line on
    /// standard input, runs MEASURED connections, prints "done" and the request count, and waits for another line before it
    /// exits. Between the two lines an instruction counter outside the process counts exactly the measured requests
    /// (valgrind's callgrind with <c>--instr-atstart=no</c>, switched on and dumped with <c>callgrind_control</c>; see
    /// benchmarks/load/callgrind-loop.sh). With <c>cookie</c> after MEASURED, each request of a batch carries a Cookie of its
    /// own, so that no two consecutive header sections are the same.
    /// </summary>
    public static void RunCounted(int depth, string path, int warmUpConnections, int measuredConnections, bool rotatingCookie = false)
    {
        var loop = new ConnectionLoop(depth, path, rotatingCookie);
        long checksum = 0;
        for (int i = 0; i < warmUpConnections; i++)
        {
            checksum += loop.RunConnection();
        }

        Console.WriteLine("ready");
        Console.ReadLine();
        for (int i = 0; i < measuredConnections; i++)
        {
            checksum += loop.RunConnection();
        }

        Console.WriteLine(FormattableString.Invariant($"done requests={(long)measuredConnections * BatchesPerConnection * depth} checksum={checksum}"));
        Console.ReadLine();
    }

    /// <summary>A server-less connection loop: settings as the server makes them, one connection at a time on this thread.</summary>
    internal sealed class ConnectionLoop
    {
        // Owned by the thread that makes the loop and runs it, as a libuv loop owns its pool: rents and returns take the owner path.
        private readonly SlabMemoryPool _pool = new("connection-loop", trackLeaks: false, Environment.CurrentManagedThreadId);
        private readonly HttpConnectionSettings _settings;
        private readonly byte[] _batch;

        /// <param name="rotatingCookie">Each request of a batch carries a Cookie of its own (a session that changes per request).</param>
        public ConnectionLoop(int depth, string path, bool rotatingCookie = false)
        {
            string request = "GET " + path + " HTTP/1.1\r\nHost: tfb-server\r\n"
                + "Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n"
                + "Connection: keep-alive\r\n";
            var batch = new StringBuilder();
            for (int i = 0; i < depth; i++)
            {
                batch.Append(request);
                if (rotatingCookie)
                {
                    batch.Append(FormattableString.Invariant($"Cookie: session=5f1c2a9e{i:D4}\r\n"));
                }

                batch.Append("\r\n");
            }

            _batch = Encoding.ASCII.GetBytes(batch.ToString());
            _settings = new HttpConnectionSettings(new PlaintextBenchmarkApplication(), new HttpLimits(), 64 * 1024, 64 * 1024,
                TimeSpan.FromSeconds(130), TimeSpan.FromSeconds(30), TimeProvider.System, NullLogger.Instance, CancellationToken.None);
        }

        /// <summary>Runs one connection to the client's close; returns the bytes it sent.</summary>
        public long RunConnection()
        {
            var transport = new BatchConnection(_pool, _batch, BatchesPerConnection);
            var connection = new HttpConnection(transport, _settings);

            // Each receive waits, as on a socket, and is completed here with the next batch; the connection's loop resumes on
            // this thread inside the completion, as it does in a libuv read callback, and runs until its next receive waits.
            return transport.Drive(connection.RunAsync());
        }
    }

    /// <summary>
    /// A connection whose peer sends <c>batches</c> copies of one batch, each once the previous one is read (as wrk does:
    /// the next batch once the responses arrived), and then closes. A receive waits until <see cref="CompleteReceive"/>
    /// delivers the next batch (or the close); every send completes at once.
    /// </summary>
    private sealed class BatchConnection(SlabMemoryPool pool, byte[] batch, int batches) : InMemoryConnection(pool)
    {
        private int _remainingBatches = batches;
        private int _offset;

        /// <summary>The next batch, or what fits of it, or 0 once every batch was sent.</summary>
        protected override int Fill(Span<byte> buffer)
        {
            if (_remainingBatches == 0)
            {
                return 0;
            }

            int count = Math.Min(batch.Length - _offset, buffer.Length);
            batch.AsSpan(_offset, count).CopyTo(buffer);
            _offset += count;
            if (_offset == batch.Length)
            {
                _offset = 0;
                _remainingBatches--;
            }

            return count;
        }

        protected override void End() => _remainingBatches = 0;
    }
}
