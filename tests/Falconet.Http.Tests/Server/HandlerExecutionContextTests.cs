using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http2;
using Falconet.Http.Tests.Http2;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Server;

/// <summary>
/// What a handler does to the execution context stays in its request: an <see cref="AsyncLocal{T}"/> it sets before it
/// returns, finished or not, is not seen by the next request of its HTTP/1.1 connection (one after another or pipelined) nor by
/// the later streams of its HTTP/2 connection. ASP.NET Core's hosting sets <c>Activity.Current</c> and a logging scope
/// this way for every request; when they leaked, each request's activity kept the previous one alive as its parent.
/// </summary>
public class HandlerExecutionContextTests : Http2TestBase
{
    private readonly AsyncLocal<string?> _set = new();
    private readonly ConcurrentQueue<string> _seen = new();

    /// <summary>
    /// Records what the request sees, then sets its own path and returns, finished or still running: a synchronous method,
    /// as an adapter's is (an <c>async</c> one has its changes undone by its builder when it returns).
    /// </summary>
    private Func<HttpContext, ValueTask> SeeThenSet(bool async) => context =>
    {
        string path = context.Request.Path;
        _seen.Enqueue($"{path} saw {_set.Value ?? "nothing"}");
        _set.Value = path;
        return async ? new ValueTask(Task.Delay(5)) : default;
    };

    private string[] Expected(int count) => Enumerable.Range(1, count).Select(i => $"/{i} saw nothing").ToArray();

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public async Task A_value_a_handler_sets_does_not_reach_the_next_request_of_its_HTTP1_connection(bool async, bool pipelined)
    {
        await using TestServer host = await StartServerAsync(SeeThenSet(async));
        using RawClient client = host.Connect();

        if (pipelined)
        {
            await client.SendAsync("GET /1 HTTP/1.1\r\nHost: t\r\n\r\nGET /2 HTTP/1.1\r\nHost: t\r\n\r\nGET /3 HTTP/1.1\r\nHost: t\r\n\r\n");
        }

        for (int i = 1; i <= 3; i++)
        {
            if (!pipelined)
            {
                await client.SendAsync($"GET /{i} HTTP/1.1\r\nHost: t\r\n\r\n");
            }

            (await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation)).StatusCode.ShouldBe(200);
        }

        _seen.ToArray().ShouldBe(Expected(3));
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public async Task A_value_a_handler_sets_does_not_reach_the_later_streams_of_its_HTTP2_connection(bool async, bool together)
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(SeeThenSet(async));
        await using TestServer _ = host;
        using Http2Client __ = client;

        if (together)
        {
            await client.SendAsync(Http2Client.Concat(
                Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, Http2Client.Request(path: "/1")),
                Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 3, Http2Client.Request(path: "/2")),
                Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 5, Http2Client.Request(path: "/3"))));
        }

        if (together)
        {
            // The three run at once and end in any order: every stream's END_STREAM, whichever comes first.
            var ended = new System.Collections.Generic.HashSet<int>();
            while (ended.Count < 3)
            {
                Frame frame = await client.ReadUntilAsync(f => f.StreamId != 0 && (f.Flags & Http2FrameFlags.EndStream) != 0).WaitAsync(TestTimeouts.Operation);
                ended.Add(frame.StreamId);
            }
        }
        else
        {
            for (int i = 1; i <= 3; i++)
            {
                int stream = 2 * i - 1;
                await client.SendAsync(Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, stream,
                    Http2Client.Request(path: $"/{i}")));
                (await client.ReadResponseAsync(stream)).StatusCode.ShouldBe(200);
            }
        }

        _seen.ToArray().Order().ToArray().ShouldBe(Expected(3));
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class HandlerExecutionContextTestsOnLibuv : HandlerExecutionContextTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class HandlerExecutionContextTestsOnIoUring : HandlerExecutionContextTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary>The same tests over TLS on the io_uring transport.</summary>
public sealed class HandlerExecutionContextTestsOverTlsOnIoUring : HandlerExecutionContextTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}
