using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A large <see cref="HttpResponse.WriteAsync"/> is sent from the handler's own memory rather than copied into the output
/// blocks: framing (Content-Length and chunked), the order of buffered and sent bytes, backpressure from a slow reader, and
/// a handler that reuses its array as soon as a write completes, on every transport, plain and over TLS.
/// </summary>
public class LargeWriteTests : ServerTests
{
    private const int Piece = 64 * 1024;

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(4 * 1024)]
    [InlineData(16 * 1024)]
    [InlineData(20_000)]
    [InlineData(32 * 1024)]
    [InlineData(1_048_576 + 13)]
    public async Task A_large_write_with_a_declared_Content_Length_arrives_byte_exact_twice_on_one_connection(int size)
    {
        byte[] payload = BodyHashing.RandomBytes(size, seed: size);
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.ContentLength = size;
            return context.Response.WriteAsync(payload);
        });
        using RawClient client = host.Connect();

        for (int i = 0; i < 2; i++)
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
            response.StatusCode.ShouldBe(200);
            response.Chunked.ShouldBeFalse();
            response.Header("Content-Length").ShouldBe(size.ToString(System.Globalization.CultureInfo.InvariantCulture));
            BodyHashing.Sha256Hex(response.Body).ShouldBe(BodyHashing.Sha256Hex(payload));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Large_writes_between_buffered_ones_go_out_chunked_in_the_order_written()
    {
        byte[] large = BodyHashing.RandomBytes(200_000, seed: 1);
        byte[] second = BodyHashing.RandomBytes(40_000, seed: 2);
        var expected = new List<byte>();
        expected.AddRange("head-"u8.ToArray());
        expected.AddRange(large);
        expected.AddRange("-middle-"u8.ToArray());
        expected.AddRange(second);
        expected.AddRange("-tail"u8.ToArray());
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Write("head-"u8);
            await context.Response.WriteAsync(large);
            context.Response.Write("-middle-"u8);
            await context.Response.WriteAsync(second);
            context.Response.Write("-tail"u8);
        });
        using RawClient client = host.Connect();

        // Pipelined: the second response follows the first one's last chunk, which waited in the output.
        await client.SendAsync("GET /1 HTTP/1.1\r\nHost: t\r\n\r\nGET /2 HTTP/1.1\r\nHost: t\r\n\r\n");
        for (int i = 0; i < 2; i++)
        {
            RawResponse response = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
            response.StatusCode.ShouldBe(200);
            response.Chunked.ShouldBeTrue();
            BodyHashing.Sha256Hex(response.Body).ShouldBe(BodyHashing.Sha256Hex(expected.ToArray()));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handler_that_refills_its_array_after_each_write_puts_every_version_on_the_wire_to_a_slow_reader()
    {
        const int Writes = 64;
        long peakBlocks = 0;
        long longestWrite = 0;
        await using TestServer host = await StartServerAsync(async context =>
        {
            byte[] buffer = new byte[Piece];
            context.Response.ContentLength = (long)Writes * Piece;
            for (int i = 0; i < Writes; i++)
            {
                // The array is refilled as soon as the previous write completed: that write must be done with it.
                Array.Fill(buffer, (byte)i);
                long start = Environment.TickCount64;
                await context.Response.WriteAsync(buffer);
                longestWrite = Math.Max(longestWrite, Environment.TickCount64 - start);
            }
        }, options =>
        {
            // Over TLS, the least bound on records in flight: what the layer holds is then small beside a copied write.
            foreach (HttpsEndpoint endpoint in options.HttpsEndpoints)
            {
                endpoint.Tls.MaxBytesInFlight = TlsServerOptions.MinMaxBytesInFlight;
            }
        });
        using RawClient client = host.Connect(receiveBufferSize: 8 * 1024);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        RawResponse head = await client.ReadHeadAsync().WaitAsync(TestTimeouts.Operation);
        head.StatusCode.ShouldBe(200);

        for (int i = 0; i < Writes; i++)
        {
            if (i % 16 == 1)
            {
                // The reader stalls: the handler waits on its write and the server holds no copy of what it wrote.
                await Task.Delay(500);
                peakBlocks = Math.Max(peakBlocks, host.Server.BlocksOutstanding);
            }

            byte[] piece = await client.ReadExactAsync(Piece).WaitAsync(TestTimeouts.Operation);
            Array.TrueForAll(piece, b => b == (byte)i).ShouldBeTrue($"piece {i} holds bytes of another write");
        }

        // Plain: the connection's input and output blocks (3 measured). TLS: its records in flight (at most 33 KiB in
        // 4 KiB blocks) and the receive blocks (10 to 13 measured). A write copied into the output would hold its 16 blocks
        // more (19 and 37 measured when every write was copied, the latter with the default bound).
        peakBlocks.ShouldBeLessThanOrEqualTo(host.IsHttps ? 20 : 8);
        longestWrite.ShouldBeGreaterThanOrEqualTo(100, "the stalled reader held a write back");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_head_and_a_body_sent_from_the_handlers_memory_leave_in_one_send_over_TLS_and_in_two_without()
    {
        const int Size = 40 * 1024;
        const int Requests = 4;
        byte[] payload = BodyHashing.RandomBytes(Size, seed: 4);
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.ContentLength = Size;
            return context.Response.WriteAsync(payload);
        }, options => options.TransportFactory = CountingTransportFactory.Over(Transport));
        using RawClient client = host.Connect();

        int sends = await SendsAfterTheFirstResponseAsync(host, client, Requests,
            response => BodyHashing.Sha256Hex(response.Body).ShouldBe(BodyHashing.Sha256Hex(payload)));

        // Counted beneath TLS: the head's records were kept for the body's send. A plain connection sends the head, then
        // the body from the handler's array.
        sends.ShouldBe((Requests - 1) * (host.IsHttps ? 1 : 2));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_responses_whose_body_ends_with_a_mid_sized_write_from_one_reused_array_arrive_whole_and_in_order()
    {
        const int Requests = 12;
        byte[] buffer = new byte[9000];
        await using TestServer host = await StartServerAsync(async context =>
        {
            // The last write ends the declared body: over TLS it is encrypted from the array, which is refilled for the
            // next response as soon as the write completed; the first piece is copied (on every connection).
            byte mark = (byte)context.Request.PathBytes[^1];
            context.Response.ContentLength = 5 + buffer.Length;
            context.Response.Write("head-"u8);
            Array.Fill(buffer, mark);
            await context.Response.WriteAsync(buffer);
        });
        using RawClient client = host.Connect();

        var requests = new System.Text.StringBuilder();
        for (int i = 0; i < Requests; i++)
        {
            requests.Append("GET /").Append((char)('a' + i)).Append(" HTTP/1.1\r\nHost: t\r\n\r\n");
        }

        await client.SendAsync(requests.ToString());
        for (int i = 0; i < Requests; i++)
        {
            RawResponse response = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
            response.Body.Length.ShouldBe(9005);
            response.Body[..5].ShouldBe("head-"u8.ToArray());
            Array.TrueForAll(response.Body[5..], b => b == (byte)('a' + i)).ShouldBeTrue($"response {i} holds another response's bytes");
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_body_of_mid_sized_writes_leaves_in_one_send_per_response_whether_its_last_write_ends_a_declared_length_or_not(bool declared)
    {
        const int Piece = 8 * 1024;
        const int Requests = 4;
        byte[] first = BodyHashing.RandomBytes(Piece, seed: 5);
        byte[] second = BodyHashing.RandomBytes(Piece, seed: 6);
        await using TestServer host = await StartServerAsync(async context =>
        {
            if (declared)
            {
                context.Response.ContentLength = 2 * Piece;
            }

            await context.Response.WriteAsync(first);
            await context.Response.WriteAsync(second);
        }, options => options.TransportFactory = CountingTransportFactory.Over(Transport));
        using RawClient client = host.Connect();

        int sends = await SendsAfterTheFirstResponseAsync(host, client, Requests, response =>
        {
            // Undeclared, the body fits the output whole and is given its Content-Length, as a declared one.
            response.Header("Content-Length").ShouldBe((2 * Piece).ToString(System.Globalization.CultureInfo.InvariantCulture));
            BodyHashing.Sha256Hex(response.Body).ShouldBe(BodyHashing.Sha256Hex([.. first, .. second]));
        });

        // Pieces below 32 KiB are copied; over TLS the last one of a declared length is encrypted from the handler's
        // array instead, with the copied bytes' records kept for its send.
        sends.ShouldBe(Requests - 1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_large_write_to_a_HEAD_response_is_counted_but_not_sent()
    {
        byte[] payload = BodyHashing.RandomBytes(Piece, seed: 3);
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.ContentLength = Piece;
            return context.Response.WriteAsync(payload);
        });
        using RawClient client = host.Connect();

        await client.SendAsync("HEAD / HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n");
        RawResponse head = await client.ReadResponseAsync(headRequest: true).WaitAsync(TestTimeouts.Operation);
        head.Header("Content-Length").ShouldBe("65536");
        RawResponse get = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
        BodyHashing.Sha256Hex(get.Body).ShouldBe(BodyHashing.Sha256Hex(payload));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_large_write_past_the_declared_Content_Length_fails_and_sends_none_of_it()
    {
        Exception? failure = null;
        byte[] payload = new byte[Piece];
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.ContentLength = Piece - 1;
            try
            {
                await context.Response.WriteAsync(payload);
            }
            catch (InvalidOperationException exception)
            {
                failure = exception;
                context.Response.ContentLength = 2;
                context.Response.Write("ok"u8);
            }
        });
        using RawClient client = host.Connect();

        await client.SendAsync("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation);
        response.BodyText.ShouldBe("ok");
        failure.ShouldNotBeNull().Message.ShouldContain("Content-Length");
    }

    /// <summary>
    /// Sends <paramref name="requests"/> GETs one after another on <paramref name="client"/>, checks each response, and
    /// returns the sends the counting transport saw after the first response (the TLS handshake's are before it).
    /// </summary>
    private static async Task<int> SendsAfterTheFirstResponseAsync(TestServer host, RawClient client, int requests, Action<RawResponse> check)
    {
        int sendsAfterFirst = 0;
        CountingConnection? connection = null;
        for (int i = 0; i < requests; i++)
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
            check(await client.ReadResponseAsync().WaitAsync(TestTimeouts.Operation));
            if (i == 0)
            {
                connection = ((CountingTransportFactory)host.Server.Options.TransportFactory!).Connections.ShouldHaveSingleItem();
                sendsAfterFirst = connection.Sends;
            }
        }

        return connection!.Sends - sendsAfterFirst;
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class LargeWriteTestsOnLibuv : LargeWriteTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class LargeWriteTestsOnIoUring : LargeWriteTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}

/// <summary>The same tests over TLS on the sockets transport: the records encrypted straight from the handler's array.</summary>
public sealed class LargeWriteTestsOverTls : LargeWriteTests
{
    protected override bool Https => true;
}

/// <summary>The same tests over TLS on the libuv transport.</summary>
public sealed class LargeWriteTestsOverTlsOnLibuv : LargeWriteTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests over TLS on the io_uring transport.</summary>
public sealed class LargeWriteTestsOverTlsOnIoUring : LargeWriteTests
{
    protected override bool Https => true;

    protected override TransportKind Transport => TransportKind.IoUring;
}
