using System;
using System.Buffers;
using System.Globalization;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// Byte-exact round trips under load: many connections at once upload and download random bodies (Content-Length and
/// chunked, random chunk sizes, up to 4 MiB, sent in pieces split at random points), and every body is checked by
/// SHA-256 on the way back. Seeded, so a failure replays; bounded to a few seconds.
/// </summary>
public class RoundTripLoadTests : ServerTests
{
    private const int Connections = 12;
    private const int RequestsPerConnection = 3;
    private const int MaxBody = 4 * 1024 * 1024;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Concurrent_uploads_and_downloads_of_random_bodies_come_back_byte_exact()
    {
        await using TestServer host = await StartServerAsync(HandleAsync);

        await Task.WhenAll(Enumerable.Range(0, Connections).Select(connection => Task.Run(() => RunConnectionAsync(host, connection))));

        host.Server.RequestCount.ShouldBe(Connections * RequestsPerConnection);
    }

    private static async Task RunConnectionAsync(TestServer host, int connection)
    {
        var random = new Random(1_000 + connection);
        using RawClient client = host.Connect();
        for (int request = 0; request < RequestsPerConnection; request++)
        {
            // Mostly small and medium bodies, some of several MiB; the empty body too.
            int size = random.Next(4) switch
            {
                0 => random.Next(0, 2_000),
                1 => random.Next(2_000, 256 * 1024),
                _ => random.Next(256 * 1024, MaxBody + 1),
            };
            byte[] body = BodyHashing.RandomBytes(size, seed: (connection * 100) + request);
            string expected = BodyHashing.Sha256Hex(body);
            RawResponse response;
            switch (random.Next(3))
            {
                case 0:
                    response = await UploadAsync(client, random, body, chunked: false);
                    break;
                case 1:
                    response = await UploadAsync(client, random, body, chunked: true);
                    break;
                default:
                    await client.SendAsync($"GET /download?size={size}&seed={(connection * 100) + request} HTTP/1.1\r\nHost: test\r\n\r\n");
                    response = await client.ReadResponseAsync();
                    break;
            }

            response.StatusCode.ShouldBe(200);
            response.Body.Length.ShouldBe(size, $"connection {connection}, request {request}");
            BodyHashing.Sha256Hex(response.Body).ShouldBe(expected, $"connection {connection}, request {request}");
        }
    }

    /// <summary>Sends the body in pieces of random sizes (as random chunks when chunked) while the echo is read back.</summary>
    private static async Task<RawResponse> UploadAsync(RawClient client, Random random, byte[] body, bool chunked)
    {
        string framing = chunked ? "Transfer-Encoding: chunked" : $"Content-Length: {body.Length}";
        await client.SendAsync($"POST /echo HTTP/1.1\r\nHost: test\r\n{framing}\r\n\r\n");
        var wire = new ArrayBufferWriter<byte>(body.Length + 1024);
        int offset = 0;
        while (offset < body.Length)
        {
            int length = Math.Min(body.Length - offset, random.Next(1, 96 * 1024));
            if (chunked)
            {
                wire.Write(Encoding.ASCII.GetBytes(length.ToString("x", CultureInfo.InvariantCulture) + "\r\n"));
                wire.Write(body.AsSpan(offset, length));
                wire.Write("\r\n"u8);
            }
            else
            {
                wire.Write(body.AsSpan(offset, length));
            }

            offset += length;
        }

        if (chunked)
        {
            wire.Write("0\r\n\r\n"u8);
        }

        // Split at random points, independent of the chunks, so chunk headers and CRLFs straddle the pieces.
        byte[] bytes = wire.WrittenSpan.ToArray();
        int seed = random.Next();
        Task send = Task.Run(async () =>
        {
            var splitter = new Random(seed);
            int sent = 0;
            while (sent < bytes.Length)
            {
                int piece = Math.Min(bytes.Length - sent, splitter.Next(1, 64 * 1024));
                await client.SendAsync(bytes.AsMemory(sent, piece));
                sent += piece;
            }
        });
        RawResponse response = await client.ReadResponseAsync();
        await send;
        return response;
    }

    private static async ValueTask HandleAsync(HttpContext context)
    {
        if (context.Request.PathBytes.SequenceEqual("/download"u8))
        {
            // The download's bytes are the same as an upload of that seed and size.
            var query = System.Web.HttpUtility.ParseQueryString(context.Request.Query);
            byte[] body = BodyHashing.RandomBytes(int.Parse(query["size"]!, CultureInfo.InvariantCulture), int.Parse(query["seed"]!, CultureInfo.InvariantCulture));
            context.Response.ContentLength = body.Length;
            for (int offset = 0; offset < body.Length; offset += 40_000)
            {
                await context.Response.WriteAsync(body.AsMemory(offset, Math.Min(40_000, body.Length - offset)));
            }

            return;
        }

        // Echo: read in odd-sized pieces and write each back at once; Content-Length in, Content-Length out, chunked in,
        // chunked out (the body passes the write-behind bound before it is complete).
        if (context.Request.ContentLength is long length)
        {
            context.Response.ContentLength = length;
        }

        byte[] buffer = ArrayPool<byte>.Shared.Rent(70_001);
        try
        {
            int read;
            while ((read = await context.Request.BodyReader.ReadAsync(buffer.AsMemory(0, 70_001))) > 0)
            {
                await context.Response.WriteAsync(buffer.AsMemory(0, read));
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}

/// <summary>The same test on the libuv transport.</summary>
public sealed class RoundTripLoadTestsOnLibuv : RoundTripLoadTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same test on the io_uring transport.</summary>
public sealed class RoundTripLoadTestsOnIoUring : RoundTripLoadTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
