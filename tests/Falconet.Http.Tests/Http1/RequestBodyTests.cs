using System;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class RequestBodyTests : ServerTests
{
    public static TheoryData<int> BodySizes => new() { 0, 1, 4095, 4096, 4097, 65_537, 1_000_003, 5 * 1024 * 1024 + 17 };

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(BodySizes))]
    public async Task Content_length_body_arrives_byte_exact(int size)
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);
        using var http = host.CreateHttpClient();
        byte[] body = BodyHashing.RandomBytes(size, size);
        using var content = new ByteArrayContent(body);
        using HttpResponseMessage response = await http.PostAsync("/upload", content);
        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        (await response.Content.ReadAsStringAsync()).ShouldBe($"{size} {BodyHashing.Sha256Hex(body)}");
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(BodySizes))]
    public async Task Chunked_body_arrives_byte_exact(int size)
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithStream);
        using var http = host.CreateHttpClient();
        byte[] body = BodyHashing.RandomBytes(size, size + 1);
        using var content = new StreamContent(new UnknownLengthStream(body));
        using var request = new HttpRequestMessage(HttpMethod.Post, "/upload") { Content = content };
        request.Headers.TransferEncodingChunked = true;
        using HttpResponseMessage response = await http.SendAsync(request);
        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        (await response.Content.ReadAsStringAsync()).ShouldBe($"{size} {BodyHashing.Sha256Hex(body)}");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Random_chunk_sizes_and_extensions_decode_byte_exact_over_a_raw_socket()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);
        using RawClient client = host.Connect();
        var random = new Random(42);
        byte[] body = BodyHashing.RandomBytes(300_000, 7);
        using var wire = new MemoryStream();
        wire.Write("POST /c HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"u8);
        int offset = 0;
        while (offset < body.Length)
        {
            int length = Math.Min(random.Next(1, 20_000), body.Length - offset);
            wire.Write(Encoding.ASCII.GetBytes($"{length:x};ext=v\r\n"));
            wire.Write(body, offset, length);
            wire.Write("\r\n"u8);
            offset += length;
        }

        wire.Write("0\r\nX-Trailer: yes\r\n\r\n"u8);
        wire.Write("GET /after HTTP/1.1\r\nHost: test\r\n\r\n"u8);
        await client.SendAsync(wire.ToArray());
        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"0 {BodyHashing.Sha256Hex(ReadOnlySpan<byte>.Empty)}");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Unread_body_is_drained_so_the_next_request_on_the_connection_works()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(context.Request.RawTarget);
            return default;
        });
        using RawClient client = host.Connect();
        string body = new('x', 10_000);
        await client.SendAsync($"POST /ignored HTTP/1.1\r\nHost: test\r\nContent-Length: {body.Length}\r\n\r\n{body}");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/ignored");
        await client.SendAsync("POST /chunked HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/chunked");
        await client.SendAsync("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/next");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Unread_body_larger_than_the_drain_limit_closes_the_connection()
    {
        await using TestServer host = await StartServerAsync(
            context => default,
            options => options.MaxRequestBodyDrainSize = 1024);
        using RawClient client = host.Connect();
        await client.SendAsync("POST /big HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\nabc");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("Content-Length: 100\r\n\r\nonly part", false)]
    [InlineData("Content-Length: 100\r\n\r\nonly part", true)]
    [InlineData("Transfer-Encoding: chunked\r\n\r\n9\r\nonly part\r\n", false)]
    [InlineData("Transfer-Encoding: chunked\r\n\r\n9\r\nonly part\r\n", true)]
    public async Task Body_cut_short_by_the_client_reaches_the_handler_as_a_bad_request(string framingAndBody, bool useStream)
    {
        var logs = new RecordingLoggerFactory();
        var failure = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(
            context => ReadWholeBodyAsync(context, useStream, failure),
            options => options.LoggerFactory = logs);
        using RawClient client = host.Connect();
        await client.SendAsync("POST /upload HTTP/1.1\r\nHost: test\r\n" + framingAndBody);
        client.Socket.Shutdown(SocketShutdown.Send);

        BadHttpRequestException error = (await failure.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeOfType<BadHttpRequestException>();
        error.Reason.ShouldBe(RequestRejectionReason.UnexpectedEndOfBody);
        error.StatusCode.ShouldBe(400);
        error.Message.ShouldBe("Unexpected end of request body.");

        // The client only stopped sending, so it still reads the answer the connection gives a bad request.
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(400);
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        logs.Contains(RecordingLoggerFactory.BadRequest).ShouldBeTrue();
        logs.Contains(RecordingLoggerFactory.ApplicationError).ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Body_cut_short_after_the_response_started_is_logged_as_a_bad_request_not_an_application_error()
    {
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(
            async context =>
            {
                context.Response.Write("started"u8);
                await context.Response.FlushAsync();
                byte[] buffer = new byte[64];
                while (await context.Request.BodyReader.ReadAsync(buffer) != 0)
                {
                }
            },
            options => options.LoggerFactory = logs);
        using RawClient client = host.Connect();
        await client.SendAsync("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\nonly part");
        client.Socket.Shutdown(SocketShutdown.Send);

        // The response had started, so the connection is aborted: read what came until it ends.
        byte[] sink = new byte[4096];
        try
        {
            while (await client.Socket.ReceiveAsync(sink.AsMemory(), SocketFlags.None).AsTask().WaitAsync(TestTimeouts.Operation) > 0)
            {
            }
        }
        catch (SocketException)
        {
        }

        for (int i = 0; i < 200 && !logs.Contains(RecordingLoggerFactory.BadRequest); i++)
        {
            await Task.Delay(10);
        }

        logs.Contains(RecordingLoggerFactory.BadRequest).ShouldBeTrue();
        logs.Contains(RecordingLoggerFactory.ApplicationError).ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Body_cut_short_by_a_connection_reset_reaches_the_handler_as_a_bad_request()
    {
        var logs = new RecordingLoggerFactory();
        var failure = new TaskCompletionSource<Exception>(TaskCreationOptions.RunContinuationsAsynchronously);
        var firstBytesRead = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TestServer host = await StartServerAsync(
            async context =>
            {
                byte[] buffer = new byte[64];
                (await context.Request.Body.ReadAsync(buffer)).ShouldBeGreaterThan(0);
                firstBytesRead.SetResult();
                await ReadWholeBodyAsync(context, useStream: true, failure);
            },
            options => options.LoggerFactory = logs);
        using (RawClient client = host.Connect())
        {
            await client.SendAsync("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\nonly part");
            await firstBytesRead.Task.WaitAsync(TestTimeouts.Operation);

            // Closing with a zero linger time sends RST instead of FIN.
            client.Socket.LingerState = new LingerOption(enable: true, seconds: 0);
        }

        BadHttpRequestException error = (await failure.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeOfType<BadHttpRequestException>();
        error.Reason.ShouldBe(RequestRejectionReason.UnexpectedEndOfBody);
        error.StatusCode.ShouldBe(400);
        logs.Contains(RecordingLoggerFactory.ApplicationError).ShouldBeFalse();
    }

    /// <summary>Reads the body to its end; the exception a read throws is handed to <paramref name="failure"/> and rethrown.</summary>
    private static async ValueTask ReadWholeBodyAsync(HttpContext context, bool useStream, TaskCompletionSource<Exception> failure)
    {
        byte[] buffer = new byte[64];
        try
        {
            while ((useStream
                ? await context.Request.Body.ReadAsync(buffer)
                : await context.Request.BodyReader.ReadAsync(buffer)) > 0)
            {
            }
        }
        catch (Exception exception)
        {
            failure.TrySetResult(exception);
            throw;
        }

        failure.TrySetException(new InvalidOperationException("The whole body was read."));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Synchronous_body_read_is_refused_instead_of_blocking_an_io_thread()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            Should.Throw<NotSupportedException>(() => context.Request.Body.Read(new byte[10], 0, 10));
            context.Response.Write("refused"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nabc");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("refused");
    }

    /// <summary>A stream whose length is unknown, so HttpClient sends it chunked.</summary>
    private sealed class UnknownLengthStream(byte[] data) : Stream
    {
        private int _position;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count)
        {
            int n = Math.Min(Math.Min(count, 50_000), data.Length - _position);
            Array.Copy(data, _position, buffer, offset, n);
            _position += n;
            return n;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class RequestBodyTestsOnLibuv : RequestBodyTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class RequestBodyTestsOnIoUring : RequestBodyTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
