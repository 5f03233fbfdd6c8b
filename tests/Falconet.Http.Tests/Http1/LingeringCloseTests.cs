using System;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// Closing while the client still sends (RFC 9112 section 9.6): the server shuts down its sending side and reads on, so
/// the client reads the whole response and a clean end of stream, and may finish sending what it was sending without
/// a reset. A reset would fail the client's sends and, on some network stacks, destroy a response not read yet.
/// </summary>
public class LingeringCloseTests : ServerTests
{
    private static ValueTask IgnoreBody(HttpContext context)
    {
        context.Response.Write("not reading that"u8);
        return default;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_large_unread_body_gets_its_response_then_a_clean_end_of_stream_not_a_reset()
    {
        await using TestServer host = await StartServerAsync(IgnoreBody);
        using RawClient client = host.Connect();

        // More than the drain allowance (64 KiB) of a 10 MB body is on its way: the server answers and closes.
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 10000000\r\n\r\n");
        await client.SendAsync(new byte[256 * 1024]);
        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldBe("not reading that");
        response.Header("Connection").ShouldBe("close");

        (await ReadEndAsync(client)).ShouldBe(0);

        // The client goes on uploading, as clients do until they notice the response: no reset may fail its sends.
        await KeepSendingAsync(client);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_rejected_request_followed_by_more_bytes_gets_its_error_then_a_clean_end_of_stream()
    {
        await using TestServer host = await StartServerAsync(IgnoreBody);
        using RawClient client = host.Connect();

        byte[] bad = Encoding.ASCII.GetBytes("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n");
        await client.SendAsync(bad);
        await client.SendAsync(new byte[128 * 1024]);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(400);

        (await ReadEndAsync(client)).ShouldBe(0);
        await KeepSendingAsync(client);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_never_closes_is_let_go_after_the_linger_time()
    {
        var clock = new ManualTimeProvider();
        await using TestServer host = await StartServerAsync(IgnoreBody, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = TimeSpan.FromMilliseconds(500);
        });
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 10000000\r\n\r\n");
        await client.SendAsync(new byte[128 * 1024]);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);

        // The client reads the end of the stream at once (the server shut down its sending side), but neither closes
        // nor sends: the server keeps reading until the linger time has passed, then closes.
        (await ReadEndAsync(client)).ShouldBe(0);
        await Task.Delay(200);
        host.Server.ConnectionCount.ShouldBe(1);
        (await clock.AdvanceUntilAsync(() => host.Server.ConnectionCount == 0, TimeSpan.FromMilliseconds(500))).ShouldBeTrue();
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(TimeSpan.FromSeconds(2));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_echo_closed_after_the_request_arrives_whole_even_when_the_client_sends_more_while_reading_it()
    {
        await using TestServer host = await StartServerAsync(EchoBody);

        // A small receive window keeps most of the echo queued in the server's send buffer when it decides to close: a
        // close with unread input would turn into a reset and throw that queued part away.
        using RawClient client = host.Connect(receiveBufferSize: 4096);
        byte[] body = BodyHashing.RandomBytes(1024 * 1024, seed: 11);
        await client.SendAsync($"POST /echo HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: {body.Length}\r\n\r\n");
        await client.SendAsync(body);

        // The echo has started (the server read the whole body first): these bytes reach a server that reads no more.
        (await Task.Run(() => client.Socket.Poll(TestTimeouts.Operation, SelectMode.SelectRead))).ShouldBeTrue();
        await client.SendAsync(new byte[4096]);

        RawResponse echoed = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
        echoed.StatusCode.ShouldBe(200);
        echoed.Body.Length.ShouldBe(body.Length);
        BodyHashing.Sha256Hex(echoed.Body).ShouldBe(BodyHashing.Sha256Hex(body));
        (await ReadEndAsync(client)).ShouldBe(0);
    }

    // Reads the whole body, then writes it back in pieces, each waiting for the socket at the write-behind bound.
    private static async ValueTask EchoBody(HttpContext context)
    {
        byte[] body = new byte[(int)context.Request.ContentLength!.Value];
        int filled = 0;
        int read;
        while ((read = await context.Request.BodyReader.ReadAsync(body.AsMemory(filled))) > 0)
        {
            filled += read;
        }

        context.Response.ContentLength = filled;
        for (int offset = 0; offset < filled; offset += 16 * 1024)
        {
            await context.Response.WriteAsync(body.AsMemory(offset, Math.Min(16 * 1024, filled - offset)));
        }
    }

    // Sends 128 KiB in pieces with pauses, long enough for a reset from a closed server to come back and fail a send.
    private static async Task KeepSendingAsync(RawClient client)
    {
        for (int i = 0; i < 8; i++)
        {
            await client.SendAsync(new byte[16 * 1024]);
            await Task.Delay(25);
        }
    }

    // Reads past the response: 0 at a clean end of stream; a reset throws a SocketException.
    private static async Task<int> ReadEndAsync(RawClient client) =>
        await client.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation);
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class LingeringCloseTestsOnLibuv : LingeringCloseTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class LingeringCloseTestsOnIoUring : LingeringCloseTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
