using System;
using System.Collections.Concurrent;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http2;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Http2;

/// <summary>
/// When a stream's handler starts and where a body read continues: a request with a body starts its handler once the read
/// batch that brought its head is handled, so a body sent with the head (a unary gRPC call) is read without waiting.
/// </summary>
public class Http2HandlerStartTests : Http2TestBase
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_body_sent_in_the_same_write_as_its_HEADERS_is_buffered_when_the_handler_first_reads()
    {
        var firstRead = new TaskCompletionSource<(bool CompletedAtOnce, string Body)>(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            byte[] buffer = new byte[64];
            ValueTask<int> read = context.Request.BodyReader.ReadAsync(buffer);
            bool completedAtOnce = read.IsCompleted;
            int count = await read;
            firstRead.TrySetResult((completedAtOnce, Encoding.ASCII.GetString(buffer, 0, count)));
        });
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.SendAsync(Http2Client.Concat(
            Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, Http2Client.Request("POST", "/greet.Greeter/SayHello")),
            Http2Client.FrameBytes(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, "hello"u8)));

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(200);
        (bool completedAtOnce, string body) = await firstRead.Task.WaitAsync(TestTimeouts.Operation);
        body.ShouldBe("hello");
        completedAtOnce.ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Handlers_start_in_the_order_their_streams_opened_when_a_body_defers_the_first()
    {
        var started = new ConcurrentQueue<string>();
        (TestServer host, Http2Client client) = await StartWithClientAsync(RecordPath(started));
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.SendAsync(Http2Client.Concat(
            Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, Http2Client.Request("POST", "/first")),
            Http2Client.FrameBytes(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, "body"u8),
            Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 3, Http2Client.Request(path: "/second"))));

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(200);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
        started.ToArray().ShouldBe(["/first", "/second"]);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stream_reset_in_the_same_write_as_its_HEADERS_never_reaches_the_handler_and_is_freed()
    {
        var started = new ConcurrentQueue<string>();
        (TestServer host, Http2Client client) = await StartWithClientAsync(RecordPath(started), options => options.Http2.MaxConcurrentStreams = 1);
        await using TestServer _ = host;
        using Http2Client __ = client;

        for (int streamId = 1; streamId <= 5; streamId += 2)
        {
            await client.SendAsync(Http2Client.Concat(
                Http2Client.FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, streamId, Http2Client.Request("POST", "/reset")),
                Http2Client.FrameBytes(Http2FrameType.RstStream, 0, streamId, Http2Client.UInt32((uint)Http2ErrorCode.Cancel)),
                Http2Client.FrameBytes(Http2FrameType.Ping, 0, 0, new byte[8])));

            // The PING's answer: the server handled the batch (its stream objects are freed at its end).
            await client.ReadUntilAsync(frame => frame.Type == Http2FrameType.Ping && frame.HasFlag(Http2FrameFlags.Ack));
        }

        // With one stream allowed, two stream objects still held by reset streams would refuse the next (rapid reset bound).
        await client.WriteHeadersAsync(7, Http2Client.Request(path: "/after"), endStream: true);
        (await client.ReadResponseAsync(7)).StatusCode.ShouldBe(200);
        started.ToArray().ShouldBe(["/after"]);
    }

    /// <summary>A handler that answers 200 and notes its request's path in the order handlers started.</summary>
    private static Func<HttpContext, ValueTask> RecordPath(ConcurrentQueue<string> started) => context =>
    {
        started.Enqueue(context.Request.Path.ToString());
        return ValueTask.CompletedTask;
    };
}

/// <summary>The same tests on the libuv transport, with the loop-thread tests.</summary>
public sealed class Http2HandlerStartTestsOnLibuv : Http2HandlerStartLoopTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests over TLS on the libuv transport.</summary>
public sealed class Http2HandlerStartTestsOverTlsOnLibuv : Http2HandlerStartLoopTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class Http2HandlerStartTestsOnIoUring : Http2HandlerStartLoopTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary>The same tests over TLS (h2 chosen with ALPN) on the sockets transport.</summary>
public sealed class Http2HandlerStartTestsOverTls : Http2HandlerStartTests
{
    protected override bool Https => true;
}

/// <summary>
/// The tests of a transport with loop threads: handlers run inline on the connection's loop (the default scheduling), and a
/// body read the loop wakes continues there too; with the thread-pool scheduling it still completes.
/// </summary>
public abstract class Http2HandlerStartLoopTests : Http2HandlerStartTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_body_read_that_waits_for_DATA_continues_on_the_loop_thread_the_handler_started_on()
    {
        var threads = new TaskCompletionSource<(int Start, bool StartOnPool, int Resume, bool ResumeOnPool)>(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            Thread start = Thread.CurrentThread;
            byte[] buffer = new byte[64];
            await context.Request.BodyReader.ReadAsync(buffer);
            Thread resume = Thread.CurrentThread;
            threads.TrySetResult((start.ManagedThreadId, start.IsThreadPoolThread, resume.ManagedThreadId, resume.IsThreadPoolThread));
        }, options => options.Scheduling = IoScheduling.IoThreads);
        await using TestServer _ = host;
        using Http2Client __ = client;

        await SendBodyAfterItsHeadersAsync(client);

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(200);
        (int startThread, bool startOnPool, int resumeThread, bool resumeOnPool) = await threads.Task.WaitAsync(TestTimeouts.Operation);
        startOnPool.ShouldBeFalse();
        resumeOnPool.ShouldBeFalse();
        resumeThread.ShouldBe(startThread);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task With_thread_pool_scheduling_a_body_read_that_waits_for_DATA_still_completes()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            byte[] buffer = new byte[64];
            int read = await context.Request.BodyReader.ReadAsync(buffer);
            await context.Response.WriteAsync(buffer.AsMemory(0, read));
        }, options => options.Scheduling = IoScheduling.ThreadPool);
        await using TestServer _ = host;
        using Http2Client __ = client;

        await SendBodyAfterItsHeadersAsync(client);

        (await client.ReadResponseAsync(1)).BodyText.ShouldBe("late");
    }

    /// <summary>Stream 1: a POST's HEADERS, then its body "late" in a write of its own once the handler waits for it.</summary>
    private static async Task SendBodyAfterItsHeadersAsync(Http2Client client)
    {
        await client.WriteHeadersAsync(1, Http2Client.Request("POST", "/upload"), endStream: false);
        await Task.Delay(50);
        await client.WriteDataAsync(1, "late"u8, endStream: true);
    }
}
