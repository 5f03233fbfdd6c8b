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
