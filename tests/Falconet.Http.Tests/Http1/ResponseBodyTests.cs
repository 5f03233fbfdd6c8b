using System;
using System.Net;
using System.Net.Http;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class ResponseBodyTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Body_written_without_flushing_gets_a_computed_content_length()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Headers.ContentType = "text/plain";
            context.Response.Write("Hello, "u8);
            context.Response.Write("World!"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 200 OK");
        response.Header("Content-Length").ShouldBe("13");
        response.Header("Content-Type").ShouldBe("text/plain");
        response.Header("Server").ShouldBe("Falconet");
        DateTimeOffset.ParseExact(response.Header("Date")!, "r", null).ShouldBeInRange(DateTimeOffset.UtcNow.AddMinutes(-1), DateTimeOffset.UtcNow.AddMinutes(1));
        response.Chunked.ShouldBeFalse();
        response.BodyText.ShouldBe("Hello, World!");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Flushing_early_without_content_length_streams_chunked()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Write("first,"u8);
            await context.Response.FlushAsync();
            await context.Response.WriteAsync("second,"u8.ToArray());
            await context.Response.Body.WriteAsync("third"u8.ToArray());
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        for (int i = 0; i < 2; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.Chunked.ShouldBeTrue();
            response.Header("Content-Length").ShouldBeNull();
            response.BodyText.ShouldBe("first,second,third");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Declared_content_length_is_kept_when_the_response_streams()
    {
        byte[] body = BodyHashing.RandomBytes(300_000, 3);
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.ContentLength = body.Length;
            for (int offset = 0; offset < body.Length; offset += 10_000)
            {
                await context.Response.WriteAsync(body.AsMemory(offset, Math.Min(10_000, body.Length - offset)));
            }
        });
        using var http = host.CreateHttpClient();
        using HttpResponseMessage response = await http.GetAsync("/");
        response.Content.Headers.ContentLength.ShouldBe(body.Length);
        response.Headers.TransferEncodingChunked.ShouldNotBe(true);
        (await response.Content.ReadAsByteArrayAsync()).ShouldBe(body);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Body_past_the_write_behind_bound_streams_chunked_to_HttpClient()
    {
        byte[] body = BodyHashing.RandomBytes(1_000_000, 5);
        await using TestServer host = await StartServerAsync(async context =>
        {
            for (int offset = 0; offset < body.Length; offset += 30_000)
            {
                await context.Response.WriteAsync(body.AsMemory(offset, Math.Min(30_000, body.Length - offset)));
            }
        });
        using var http = host.CreateHttpClient();
        using HttpResponseMessage response = await http.GetAsync("/");
        response.Headers.TransferEncodingChunked.ShouldBe(true);
        (await response.Content.ReadAsByteArrayAsync()).ShouldBe(body);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Body_writer_writes_land_in_the_response()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            ResponseBodyWriter writer = context.Response.BodyWriter;
            Span<byte> span = writer.GetSpan(5);
            "abcde"u8.CopyTo(span);
            writer.Advance(5);
            Span<byte> large = writer.GetSpan(10_000);
            large[..10_000].Fill((byte)'z');
            writer.Advance(10_000);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.Header("Content-Length").ShouldBe("10005");
        response.BodyText.ShouldBe("abcde" + new string('z', 10_000));
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("WriteAsync")]
    [InlineData("Body.WriteAsync")]
    [InlineData("BodyWriter.WaitAsync")]
    public async Task Large_response_to_a_slow_reader_arrives_whole_with_bounded_server_buffering(string path)
    {
        const int Size = 8 * 1024 * 1024;
        const int Piece = 32 * 1024;
        byte[] body = BodyHashing.RandomBytes(Size, 11);
        await using TestServer host = await StartServerAsync(async context =>
        {
            HttpResponse response = context.Response;
            response.ContentLength = Size;
            for (int offset = 0; offset < Size; offset += Piece)
            {
                ReadOnlyMemory<byte> piece = body.AsMemory(offset, Piece);
                switch (path)
                {
                    case "WriteAsync":
                        await response.WriteAsync(piece);
                        break;
                    case "Body.WriteAsync":
                        await response.Body.WriteAsync(piece);
                        break;
                    default:
                        // In pieces of at most a block, as a serializer writing into the buffer writer would.
                        for (int at = 0; at < Piece; at += 4096)
                        {
                            Span<byte> span = response.BodyWriter.GetSpan(4096);
                            piece.Span.Slice(at, 4096).CopyTo(span);
                            response.BodyWriter.Advance(4096);
                        }

                        await response.BodyWriter.WaitAsync();
                        break;
                }
            }
        });
        using RawClient client = host.Connect(receiveBufferSize: 32 * 1024);
        await client.SendAsync("GET /big HTTP/1.1\r\nHost: test\r\n\r\n");
        string status = (await client.ReadLineAsync())!;
        status.ShouldBe("HTTP/1.1 200 OK");
        while ((await client.ReadLineAsync())!.Length != 0)
        {
        }

        // Every byte is hashed: a lost, repeated or reordered piece anywhere in the body fails the comparison.
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        long received = 0;
        while (received < Size)
        {
            int take = (int)Math.Min(256 * 1024, Size - received);
            byte[] part = await client.ReadExactAsync(take);
            hash.AppendData(part);
            received += take;
            await Task.Delay(5);
        }

        received.ShouldBe(Size);
        Convert.ToHexString(hash.GetHashAndReset()).ShouldBe(BodyHashing.Sha256Hex(body));
        client.Dispose();
        await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);

        // The bound (64 KiB) plus one write and a block of rounding: never the 8 MiB body.
        host.Server.PeakConnectionOutputBuffered.ShouldBeGreaterThan(0);
        host.Server.PeakConnectionOutputBuffered.ShouldBeLessThanOrEqualTo(64 * 1024 + Piece + 4096);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Http10_response_without_content_length_after_a_flush_is_close_delimited()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Write("streamed "u8);
            await context.Response.FlushAsync();
            context.Response.Write("to the close"u8);
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.Header("Content-Length").ShouldBeNull();
        response.Header("Transfer-Encoding").ShouldBeNull();
        response.Header("Connection").ShouldBe("close");
        response.BodyText.ShouldBe("streamed to the close");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task No_content_response_has_neither_body_nor_content_length()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.StatusCode = 204;
            Should.Throw<InvalidOperationException>(() => context.Response.Write("x"u8));
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("DELETE /thing HTTP/1.1\r\nHost: test\r\n\r\nGET /again HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 204 No Content");
        response.Header("Content-Length").ShouldBeNull();
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(204);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Status_and_headers_cannot_change_once_the_response_started()
    {
        Exception? failure = null;
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Headers["X-Custom"] = "one";
            await context.Response.FlushAsync();
            context.Response.HasStarted.ShouldBeTrue();
            failure = Should.Throw<InvalidOperationException>(() => context.Response.StatusCode = 500);
        });
        using var http = host.CreateHttpClient();
        using HttpResponseMessage response = await http.GetAsync("/");
        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        response.Headers.GetValues("X-Custom").ShouldBe(new[] { "one" });
        failure.ShouldNotBeNull();
    }

    /// <summary>Writes <paramref name="data"/> through one of the response's write paths.</summary>
    private static async Task WriteThroughAsync(HttpResponse response, string path, byte[] data)
    {
        switch (path)
        {
            case "Write":
                response.Write(data);
                break;
            case "WriteAsync":
                await response.WriteAsync(data);
                break;
            case "BodyWriter.Advance":
                data.CopyTo(response.BodyWriter.GetSpan(data.Length));
                response.BodyWriter.Advance(data.Length);
                break;
            case "Body.Write":
                response.AllowSynchronousWrites = true;
                response.Body.Write(data, 0, data.Length);
                break;
            case "Body.WriteAsync":
                await response.Body.WriteAsync(data);
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(path), path, null);
        }
    }

    public static TheoryData<string, bool> WritePaths()
    {
        var data = new TheoryData<string, bool>();
        foreach (string path in new[] { "Write", "WriteAsync", "BodyWriter.Advance", "Body.Write", "Body.WriteAsync" })
        {
            data.Add(path, false);
            data.Add(path, true);
        }

        return data;
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(WritePaths))]
    public async Task Write_past_the_declared_content_length_throws_before_any_byte_is_sent(string path, bool startedFirst)
    {
        Exception? failure = null;
        long writtenAfterFailure = -1;
        await using TestServer host = await StartServerAsync(async context =>
        {
            HttpResponse response = context.Response;
            if (context.Request.PathBytes.SequenceEqual("/ok"u8))
            {
                response.Write("ok"u8);
                return;
            }

            response.ContentLength = 5;
            await WriteThroughAsync(response, path, "HE"u8.ToArray());
            if (startedFirst)
            {
                await response.FlushAsync();
            }

            failure = await Should.ThrowAsync<InvalidOperationException>(() => WriteThroughAsync(response, path, "LLO!"u8.ToArray()));
            writtenAfterFailure = response.BytesWritten;
            await WriteThroughAsync(response, path, "LLO"u8.ToArray());
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET /five HTTP/1.1\r\nHost: test\r\n\r\nGET /ok HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.Header("Content-Length").ShouldBe("5");
        response.BodyText.ShouldBe("HELLO");

        // Had "LLO!" gone out, this response would start with "!".
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
        failure.ShouldNotBeNull();
        failure.Message.ShouldContain("Content-Length of 5");
        writtenAfterFailure.ShouldBe(2);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Changing_content_length_after_the_start_does_not_move_the_limit_that_was_sent()
    {
        Exception? failure = null;
        await using TestServer host = await StartServerAsync(async context =>
        {
            HttpResponse response = context.Response;
            if (context.Request.PathBytes.SequenceEqual("/ok"u8))
            {
                response.Write("ok"u8);
                return;
            }

            response.ContentLength = 5;
            response.Write("HE"u8);
            await response.FlushAsync();
            response.ContentLength = 100;
            failure = Should.Throw<InvalidOperationException>(() => response.Write("LLO!"u8));
            response.Write("LLO"u8);
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET /five HTTP/1.1\r\nHost: test\r\n\r\nGET /ok HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.Header("Content-Length").ShouldBe("5");
        response.BodyText.ShouldBe("HELLO");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
        failure.ShouldNotBeNull();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Large_write_past_the_declared_content_length_before_the_start_is_answered_500()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/ok"u8))
            {
                context.Response.Write("ok"u8);
                return;
            }

            context.Response.ContentLength = 10;
            await context.Response.WriteAsync(new byte[100_000]);
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET /big HTTP/1.1\r\nHost: test\r\n\r\nGET /ok HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse failed = await client.ReadResponseAsync();
        failed.StatusCode.ShouldBe(500);
        failed.Header("Content-Length").ShouldBe("0");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Synchronous_stream_writes_and_flush_throw_unless_allowed()
    {
        var failures = new System.Collections.Generic.List<Exception>();
        await using TestServer host = await StartServerAsync(context =>
        {
            System.IO.Stream body = context.Response.Body;
            failures.Add(Should.Throw<NotSupportedException>(() => body.Write("a"u8.ToArray(), 0, 1)));
            failures.Add(Should.Throw<NotSupportedException>(() => body.Write("a"u8)));
            failures.Add(Should.Throw<NotSupportedException>(() => body.WriteByte((byte)'a')));
            failures.Add(Should.Throw<NotSupportedException>(() => body.Flush()));
            context.Response.BytesWritten.ShouldBe(0);
            context.Response.Write("nothing else"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("nothing else");
        failures.Count.ShouldBe(4);
        failures[0].Message.ShouldContain("AllowSynchronousWrites");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_server_option_allows_synchronous_stream_writes_on_every_request_and_a_handler_can_still_refuse_them()
    {
        var allowedAtStart = new System.Collections.Generic.List<bool>();
        await using TestServer host = await StartServerAsync(
            context =>
            {
                HttpResponse response = context.Response;
                allowedAtStart.Add(response.AllowSynchronousWrites);
                response.Body.Write("sync"u8);
                response.AllowSynchronousWrites = false;
                return default;
            },
            options => options.AllowSynchronousWrites = true);
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");

        (await client.ReadResponseAsync()).BodyText.ShouldBe("sync");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("sync");
        allowedAtStart.ShouldBe(new[] { true, true });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Allowed_synchronous_stream_writes_buffer_and_flush_keeps_the_computed_length_for_this_request_only()
    {
        var allowedAtStart = new System.Collections.Generic.List<bool>();
        await using TestServer host = await StartServerAsync(context =>
        {
            HttpResponse response = context.Response;
            allowedAtStart.Add(response.AllowSynchronousWrites);
            response.AllowSynchronousWrites = true;
            response.Body.Write("sync "u8.ToArray(), 0, 5);
            response.Body.Write("stream "u8);
            response.Body.WriteByte((byte)'!');
            response.Body.Flush();
            response.HasStarted.ShouldBeFalse();
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        for (int i = 0; i < 2; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.Chunked.ShouldBeFalse();
            response.Header("Content-Length").ShouldBe("13");
            response.BodyText.ShouldBe("sync stream !");
        }

        allowedAtStart.ShouldBe(new[] { false, false });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stream_BeginWrite_writes_asynchronously_without_allowing_synchronous_writes()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            System.IO.Stream body = context.Response.Body;
            byte[] data = "begin/end"u8.ToArray();
            await Task.Factory.FromAsync(body.BeginWrite, body.EndWrite, data, 0, data.Length, null);
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("begin/end");
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ResponseBodyTestsOnLibuv : ResponseBodyTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ResponseBodyTestsOnIoUring : ResponseBodyTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
