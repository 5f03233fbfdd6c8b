using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A flush made while the handler runs synchronously is held for the connection's send after the handler (one send per read
/// batch, pipelined or not), yet flushed bytes reach a client that waits for them as soon as the handler waits itself.
/// Sends and read batches are counted through a wrapping transport.
/// </summary>
public class FlushCoalescingTests : ServerTests
{
    private const string Get = "GET / HTTP/1.1\r\nHost: test\r\n\r\n";

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_responses_of_a_handler_that_flushes_leave_in_one_send_per_read_batch()
    {
        await using TestServer host = await StartCountingAsync(context =>
        {
            context.Response.Write("Hello, World!"u8);
            return context.Response.FlushAsync();
        });
        using RawClient client = host.Connect();
        await client.SendAsync(string.Concat(Enumerable.Repeat(Get, 16)));
        for (int i = 0; i < 16; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.Chunked.ShouldBeTrue();
            response.BodyText.ShouldBe("Hello, World!");
        }

        // Without holding: one send per flush and one for the batch's last chunk, 17 for one read of the 16 requests.
        CountingConnection connection = Counted(host).Connections.ShouldHaveSingleItem();
        connection.Sends.ShouldBe(connection.DataReceives);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_response_flushed_twice_and_completed_without_waiting_leaves_in_one_send()
    {
        await using TestServer host = await StartCountingAsync(async context =>
        {
            context.Response.Write("Hello, "u8);
            await context.Response.FlushAsync();
            context.Response.Write("World!"u8);
            await context.Response.FlushAsync();
        });
        using RawClient client = host.Connect();
        for (int i = 0; i < 5; i++)
        {
            await client.SendAsync(Get);
            (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");
        }

        // Each flush and the last chunk were a send of their own: 15 for these 5 round trips.
        Counted(host).Connections.ShouldHaveSingleItem().Sends.ShouldBe(5);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Flushed_bytes_reach_a_waiting_client_before_the_response_ends(bool requestPipelinedBehind)
    {
        var firstRead = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var secondRead = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/next"u8))
            {
                context.Response.Write("next"u8);
                return;
            }

            // Flushed while the handler still runs synchronously: held, then sent as soon as the handler waits.
            context.Response.Write("first"u8);
            await context.Response.FlushAsync();
            await firstRead.Task;

            // Flushed after it went asynchronous: sent at once, after the held bytes.
            context.Response.Write("second"u8);
            await context.Response.FlushAsync();
            await secondRead.Task;
            context.Response.Write("third"u8);
        });
        using RawClient client = host.Connect();
        await StreamingTranscript.ReadAsync(client, requestPipelinedBehind, firstRead, secondRead);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Held_flushes_keep_buffered_output_within_the_write_behind_bound()
    {
        const int Piece = 16 * 1024;
        const int Pieces = 64;
        byte[] piece = BodyHashing.RandomBytes(Piece, 7);
        await using TestServer host = await StartServerAsync(async context =>
        {
            for (int i = 0; i < Pieces; i++)
            {
                context.Response.Write(piece);
                await context.Response.FlushAsync();
            }
        });
        using RawClient client = host.Connect(receiveBufferSize: 32 * 1024);
        await client.SendAsync(Get);
        await Task.Delay(100);
        RawResponse response = await client.ReadResponseAsync();
        response.Body.Length.ShouldBe(Piece * Pieces);
        client.Dispose();
        await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);

        // Holding every flush would have buffered the whole megabyte before the first send.
        host.Server.PeakConnectionOutputBuffered.ShouldBeLessThanOrEqualTo(64 * 1024 + Piece + 4096);
    }

    /// <summary>Starts a server whose transport is the class's, wrapped in a <see cref="CountingTransportFactory"/>.</summary>
    private Task<TestServer> StartCountingAsync(Func<HttpContext, ValueTask> handler)
        => StartServerAsync(handler, options => options.TransportFactory = CountingTransportFactory.Over(Transport));

    private static CountingTransportFactory Counted(TestServer host) => (CountingTransportFactory)host.Server.Options.TransportFactory!;
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class FlushCoalescingTestsOnLibuv : FlushCoalescingTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class FlushCoalescingTestsOnIoUring : FlushCoalescingTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
