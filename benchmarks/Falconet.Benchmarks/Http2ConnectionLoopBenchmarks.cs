using System;
using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Http;
using Falconet.Http.Http2;
using Falconet.Transport;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Primitives;

namespace Falconet.Benchmarks;

/// <summary>
/// The whole HTTP/2 request path of one connection without a kernel or a transport: the frame loop, HPACK both ways, the
/// stream objects, the application (the TechEmpower plaintext endpoint, as the sample writes it), the HEADERS and DATA
/// frames of the response and the send of each read batch, over an in-memory connection that receives batches of
/// <c>streams</c> requests (as h2load sends them: indexed header fields after the first request) and throws the
/// responses away. It measures the server's own user time per request.
/// </summary>
public static class Http2ConnectionLoopBenchmarks
{
    /// <summary>Batches each connection receives before the client closes.</summary>
    public const int BatchesPerConnection = 1000;

    /// <summary><c>--http2-loop STREAMS SECONDS</c>: ns per request of the fastest and median 0.2 s round, and allocated bytes per request.</summary>
    public static void RunRounds(int streams, double seconds)
    {
        var loop = new ConnectionLoop(streams);
        long checksum = 0;
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
                roundRequests += (long)streams * BatchesPerConnection;
            }

            perRequest[round] = System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalNanoseconds / roundRequests;
            allocated += GC.GetAllocatedBytesForCurrentThread() - before;
            requests += roundRequests;
        }

        Array.Sort(perRequest);
        Console.WriteLine(FormattableString.Invariant(
            $"streams={streams} rounds={rounds} fastest_ns_per_request={perRequest[0]:F1} median_ns_per_request={perRequest[rounds / 2]:F1} allocated_bytes_per_request={(double)allocated / requests:F3} checksum={checksum}"));
    }

    /// <summary>
    /// <c>--http2-loop-count STREAMS WARMUP MEASURED</c>: WARMUP connections, "ready", waits for a line, MEASURED connections,
    /// "done" with the request count, waits for a line: an instruction counter outside the process (callgrind with
    /// <c>--instr-atstart=no</c>) counts exactly the measured requests.
    /// </summary>
    public static void RunCounted(int streams, int warmUpConnections, int measuredConnections)
    {
        var loop = new ConnectionLoop(streams);
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

        Console.WriteLine(FormattableString.Invariant($"done requests={(long)measuredConnections * BatchesPerConnection * streams} checksum={checksum}"));
        Console.ReadLine();
    }

    /// <summary>A server-less HTTP/2 connection: settings as the server makes them, one connection at a time on this thread.</summary>
    private sealed class ConnectionLoop
    {
        private readonly SlabMemoryPool _pool = new("http2-loop", trackLeaks: false, SlabMemoryPool.NoOwnerThread);
        private readonly HttpConnectionSettings _settings;
        private readonly int _streams;

        public ConnectionLoop(int streams)
        {
            _streams = streams;
            _settings = new HttpConnectionSettings(new PlaintextApplication(), new HttpLimits(), 64 * 1024, 64 * 1024,
                TimeSpan.FromSeconds(130), TimeSpan.FromSeconds(30), TimeProvider.System, NullLogger.Instance, CancellationToken.None);
        }

        public long RunConnection()
        {
            var transport = new FrameConnection(_pool, _streams, BatchesPerConnection);
            var connection = new Http2Connection(transport, _settings);
            Task run = connection.RunAsync();
            while (!run.IsCompleted)
            {
                transport.CompleteReceive();
            }

            run.GetAwaiter().GetResult();
            return transport.SentBytes;
        }
    }

    /// <summary>The sample's /plaintext endpoint: Content-Type and a 13-byte body, Content-Length from the server.</summary>
    private sealed class PlaintextApplication : IHttpApplication
    {
        private static readonly StringValues s_textPlain = new("text/plain");

        public ValueTask Handle(HttpContext context)
        {
            HttpResponse response = context.Response;
            if (!context.Request.PathBytes.SequenceEqual("/plaintext"u8))
            {
                response.StatusCode = 404;
                return default;
            }

            response.Headers.ContentType = s_textPlain;
            response.Write("Hello, World!"u8);
            return default;
        }
    }

    /// <summary>
    /// A peer that opens like h2load (preface, SETTINGS, a wide connection window, the SETTINGS acknowledgement), then sends
    /// <c>batches</c> batches of <c>streams</c> GET /plaintext requests, each once the previous one was answered, and closes.
    /// The first request adds its fields to the HPACK dynamic table; every later one refers to them (one byte a field).
    /// </summary>
    private sealed class FrameConnection : InMemoryConnection
    {
        private static readonly byte[] s_first = BuildFirst();
        private static readonly byte[] s_indexed = [0x82, 0x86, 0x80 | 65, 0x80 | 64, 0x80 | 63, 0x80 | 62];

        private readonly byte[] _batch;
        private readonly int _streams;
        private int _remainingBatches;
        private int _offset = -1;
        private int _nextStream = 3;

        public FrameConnection(SlabMemoryPool pool, int streams, int batches)
            : base(pool)
        {
            _streams = streams;
            _remainingBatches = batches;
            _batch = new byte[streams * (Http2FrameHeader.Size + s_indexed.Length)];
            for (int i = 0; i < streams; i++)
            {
                Span<byte> frame = _batch.AsSpan(i * (Http2FrameHeader.Size + s_indexed.Length));
                Http2FrameHeader.Write(frame, s_indexed.Length, Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1);
                s_indexed.CopyTo(frame.Slice(Http2FrameHeader.Size));
            }
        }

        private static byte[] BuildFirst()
        {
            var bytes = new List<byte>("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray());
            AddFrame(bytes, Http2FrameType.Settings, Http2FrameFlags.None, 0, [0, 4, 0x40, 0, 0, 0]);
            AddFrame(bytes, Http2FrameType.WindowUpdate, Http2FrameFlags.None, 0, [0x7F, 0xFF, 0, 0]);
            AddFrame(bytes, Http2FrameType.Settings, Http2FrameFlags.Ack, 0, []);
            var block = new List<byte> { 0x82, 0x86 };
            AddIndexedLiteral(block, 4, "/plaintext");
            AddIndexedLiteral(block, 1, "localhost:8080");
            AddIndexedLiteral(block, 58, "h2load nghttp2/1.52.0");
            AddIndexedLiteral(block, 19, "*/*");
            AddFrame(bytes, Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, block.ToArray());
            return bytes.ToArray();
        }

        private static void AddIndexedLiteral(List<byte> block, int nameIndex, string value)
        {
            block.Add((byte)(0x40 | nameIndex));
            block.Add((byte)value.Length);
            block.AddRange(System.Text.Encoding.ASCII.GetBytes(value));
        }

        private static void AddFrame(List<byte> bytes, Http2FrameType type, Http2FrameFlags flags, int streamId, byte[] payload)
        {
            byte[] header = new byte[Http2FrameHeader.Size];
            Http2FrameHeader.Write(header, payload.Length, type, flags, streamId);
            bytes.AddRange(header);
            bytes.AddRange(payload);
        }

        /// <summary>The opening, then the next batch (fresh stream identifiers), then 0.</summary>
        protected override int Fill(Span<byte> buffer)
        {
            int count = 0;
            if (_offset < 0)
            {
                count = s_first.Length;
                s_first.CopyTo(buffer);
                _offset = 0;
            }
            else if (_remainingBatches > 0)
            {
                if (_offset == 0)
                {
                    for (int i = 0; i < _streams; i++)
                    {
                        BinaryPrimitives.WriteInt32BigEndian(_batch.AsSpan(i * (Http2FrameHeader.Size + s_indexed.Length) + 5), _nextStream);
                        _nextStream += 2;
                    }
                }

                count = Math.Min(_batch.Length - _offset, buffer.Length);
                _batch.AsSpan(_offset, count).CopyTo(buffer);
                _offset += count;
                if (_offset == _batch.Length)
                {
                    _offset = 0;
                    _remainingBatches--;
                }
            }

            return count;
        }

        protected override void End() => _remainingBatches = 0;
    }
}
