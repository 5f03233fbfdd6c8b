using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>HttpContext.RequestAborted: a client that goes away while an asynchronous handler waits cancels it; bytes that arrive meanwhile are kept.</summary>
public class RequestAbortedTests : ServerTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_client_that_closes_or_resets_while_the_handler_waits_cancels_RequestAborted(bool reset)
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(async context =>
        {
            CancellationToken aborted = context.RequestAborted;
            entered.TrySetResult();
            try
            {
                await Task.Delay(Timeout.Infinite, aborted);
            }
            catch (OperationCanceledException)
            {
                cancelled.TrySetResult();
            }
        });

        using (RawClient client = host.Connect())
        {
            await client.SendAsync("GET /wait HTTP/1.1\r\nHost: test\r\n\r\n");
            await entered.Task.WaitAsync(TestTimeouts.Operation);
            if (reset)
            {
                client.Socket.LingerState = new LingerOption(true, 0);
            }
        }

        await cancelled.Task.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_request_pipelined_while_the_handler_waits_is_kept_and_answered_after_it()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool firstAborted = true;
        await using TestServer host = await StartServerAsync(async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/first"u8))
            {
                entered.TrySetResult();
                await release.Task;
                firstAborted = context.RequestAborted.IsCancellationRequested;
                context.Response.Write("first"u8);
                return;
            }

            context.Response.Write(context.RequestAborted.IsCancellationRequested ? "aborted"u8 : "second"u8);
        });

        using RawClient client = host.Connect();
        await client.SendAsync("GET /first HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        await client.SendAsync("GET /second HTTP/1.1\r\nHost: test\r\n\r\n");

        // Give the watching receive time to take the second request in before the first handler completes.
        await Task.Delay(100);
        release.TrySetResult();
        (await client.ReadResponseAsync()).BodyText.ShouldBe("first");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("second");
        firstAborted.ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_body_that_arrives_while_the_handler_waits_is_read_whole()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        byte[] body = BodyHashing.RandomBytes(100_000, seed: 7);
        await using TestServer host = await StartServerAsync(async context =>
        {
            entered.TrySetResult();
            await release.Task;
            await BodyHashing.EchoHashWithReader(context);
        });

        using RawClient client = host.Connect();
        await client.SendAsync($"POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: {body.Length}\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        Task sending = client.SendAsync(body);
        await Task.Delay(100);
        release.TrySetResult();
        await sending;
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");

        // The connection goes on: the watching receive's block went back into the input.
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")]
    [InlineData("GET / HTTP/1.0\r\n\r\n")]
    public async Task An_asynchronous_handler_on_a_closing_connection_answers_then_closes_without_keeping_a_block(string request)
    {
        // The server's disposal checks that the watching receive's block went back to the pool.
        await using TestServer host = await StartServerAsync(async context =>
        {
            await Task.Yield();
            context.Response.Write("bye"u8);
        });

        using RawClient client = host.Connect();
        await client.SendAsync(request);
        (await client.ReadResponseAsync()).BodyText.ShouldBe("bye");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Abort_cancels_RequestAborted_and_resets_the_connection()
    {
        bool cancelledAfterAbort = false;
        await using TestServer host = await StartServerAsync(async context =>
        {
            CancellationToken aborted = context.RequestAborted;
            await Task.Yield();
            context.Abort();

            // Cancelled on the thread pool: wait for it a bounded time.
            var seen = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            using (aborted.Register(() => seen.TrySetResult()))
            {
                await Task.WhenAny(seen.Task, Task.Delay(TestTimeouts.Operation));
            }

            cancelledAfterAbort = aborted.IsCancellationRequested;
        });

        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        cancelledAfterAbort.ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task RequestAborted_is_not_cancelled_for_requests_that_complete_and_its_source_is_reused()
    {
        var tokens = new CancellationToken[3];
        int index = 0;
        await using TestServer host = await StartServerAsync(async context =>
        {
            tokens[index++] = context.RequestAborted;
            await Task.Yield();
            context.Response.Write(context.RequestAborted.IsCancellationRequested ? "aborted"u8 : "ok"u8);
        });

        using RawClient client = host.Connect();
        for (int i = 0; i < tokens.Length; i++)
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
        }

        // One source per connection, reset between requests: every token is its token.
        tokens[1].ShouldBe(tokens[0]);
        tokens[2].ShouldBe(tokens[0]);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_stop_that_aborts_a_request_cancels_its_RequestAborted()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(
            async context =>
            {
                CancellationToken aborted = context.RequestAborted;
                entered.TrySetResult();
                try
                {
                    await Task.Delay(Timeout.Infinite, aborted);
                }
                catch (OperationCanceledException)
                {
                    cancelled.TrySetResult();
                }
            },
            options => options.ShutdownTimeout = TimeSpan.FromMilliseconds(200));

        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);
        await cancelled.Task.WaitAsync(TestTimeouts.Operation);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class RequestAbortedTestsOnLibuv : RequestAbortedTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class RequestAbortedTestsOnIoUring : RequestAbortedTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
