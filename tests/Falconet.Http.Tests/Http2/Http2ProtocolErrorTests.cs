using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Falconet.Http.Http2;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;
using static Falconet.Http.Tests.Infrastructure.Http2Client;

namespace Falconet.Http.Tests.Http2;

/// <summary>
/// Every protocol error a client can make gets the RFC 9113 answer: a connection error (GOAWAY with the code, then the
/// close) or a stream error (RST_STREAM with the code, and the connection serves on). Frames are written raw.
/// </summary>
public class Http2ProtocolErrorTests : Http2TestBase
{
    private static byte[] Get(int streamId, bool endStream = true) => FrameBytes(Http2FrameType.Headers,
        Http2FrameFlags.EndHeaders | (endStream ? Http2FrameFlags.EndStream : 0), streamId, Request());

    private static byte[] Post(int streamId, params (string, string)[] fields) => FrameBytes(Http2FrameType.Headers,
        Http2FrameFlags.EndHeaders, streamId, Request("POST", "/upload", fields: fields));

    private static byte[] Frame(Http2FrameType type, Http2FrameFlags flags, int streamId, params byte[] payload)
        => FrameBytes(type, flags, streamId, payload);

    /// <summary>Name, what the client sends after the preface, and the connection error code expected.</summary>
    public static TheoryData<string> ConnectionErrors => new()
    {
        "frame larger than SETTINGS_MAX_FRAME_SIZE",
        "DATA on stream 0",
        "HEADERS on stream 0",
        "HEADERS on an even stream",
        "stream identifier going backwards",
        "DATA on an idle stream",
        "RST_STREAM on an idle stream",
        "WINDOW_UPDATE on an idle stream",
        "CONTINUATION without HEADERS",
        "a frame between HEADERS and CONTINUATION",
        "CONTINUATION of another stream",
        "invalid DATA padding",
        "invalid HEADERS padding",
        "SETTINGS on a stream",
        "SETTINGS of a length not a multiple of 6",
        "SETTINGS acknowledgement with a payload",
        "SETTINGS_ENABLE_PUSH of 2",
        "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1",
        "SETTINGS_MAX_FRAME_SIZE below 2^14",
        "SETTINGS_MAX_FRAME_SIZE above 2^24-1",
        "PING on a stream",
        "PING of 7 bytes",
        "GOAWAY on a stream",
        "WINDOW_UPDATE of 0 on the connection",
        "WINDOW_UPDATE overflowing the connection window",
        "WINDOW_UPDATE of 3 bytes",
        "RST_STREAM of 3 bytes",
        "PUSH_PROMISE from a client",
        "an undecodable header block",
        "HEADERS on a closed stream",
        "DATA past the connection window",
    };

    private static (byte[] Bytes, Http2ErrorCode Code) ConnectionCase(string name) => name switch
    {
        "frame larger than SETTINGS_MAX_FRAME_SIZE" => (Concat(Post(1), Frame(Http2FrameType.Data, 0, 1, new byte[16 * 1024 + 1])), Http2ErrorCode.FrameSizeError),
        "DATA on stream 0" => (Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 0, 1, 2, 3), Http2ErrorCode.ProtocolError),
        "HEADERS on stream 0" => (Get(0), Http2ErrorCode.ProtocolError),
        "HEADERS on an even stream" => (Get(2), Http2ErrorCode.ProtocolError),
        "stream identifier going backwards" => (Concat(Get(5), Get(3)), Http2ErrorCode.ProtocolError),
        "DATA on an idle stream" => (Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, 1), Http2ErrorCode.ProtocolError),
        "RST_STREAM on an idle stream" => (Frame(Http2FrameType.RstStream, 0, 1, UInt32(8)), Http2ErrorCode.ProtocolError),
        "WINDOW_UPDATE on an idle stream" => (Frame(Http2FrameType.WindowUpdate, 0, 1, UInt32(1)), Http2ErrorCode.ProtocolError),
        "CONTINUATION without HEADERS" => (Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, Request()), Http2ErrorCode.ProtocolError),
        "a frame between HEADERS and CONTINUATION" => (Concat(FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, Request()),
            Frame(Http2FrameType.Priority, 0, 1, 0, 0, 0, 0, 16), Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1)), Http2ErrorCode.ProtocolError),
        "CONTINUATION of another stream" => (Concat(FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, Request()),
            Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 3)), Http2ErrorCode.ProtocolError),
        "invalid DATA padding" => (Concat(Post(1), Frame(Http2FrameType.Data, Http2FrameFlags.Padded, 1, 4, 1, 2, 3)), Http2ErrorCode.ProtocolError),
        "invalid HEADERS padding" => (Frame(Http2FrameType.Headers, Http2FrameFlags.Padded | Http2FrameFlags.EndHeaders, 1, 9, 0), Http2ErrorCode.ProtocolError),
        "SETTINGS on a stream" => (Frame(Http2FrameType.Settings, 0, 1), Http2ErrorCode.ProtocolError),
        "SETTINGS of a length not a multiple of 6" => (Frame(Http2FrameType.Settings, 0, 0, 0, 3, 0, 0, 0), Http2ErrorCode.FrameSizeError),
        "SETTINGS acknowledgement with a payload" => (Frame(Http2FrameType.Settings, Http2FrameFlags.Ack, 0, 0, 3, 0, 0, 0, 1), Http2ErrorCode.FrameSizeError),
        "SETTINGS_ENABLE_PUSH of 2" => (Frame(Http2FrameType.Settings, 0, 0, 0, 2, 0, 0, 0, 2), Http2ErrorCode.ProtocolError),
        "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1" => (Frame(Http2FrameType.Settings, 0, 0, 0, 4, 0x80, 0, 0, 0), Http2ErrorCode.FlowControlError),
        "SETTINGS_MAX_FRAME_SIZE below 2^14" => (Frame(Http2FrameType.Settings, 0, 0, 0, 5, 0, 0, 0x3F, 0xFF), Http2ErrorCode.ProtocolError),
        "SETTINGS_MAX_FRAME_SIZE above 2^24-1" => (Frame(Http2FrameType.Settings, 0, 0, 0, 5, 1, 0, 0, 0), Http2ErrorCode.ProtocolError),
        "PING on a stream" => (Frame(Http2FrameType.Ping, 0, 1, new byte[8]), Http2ErrorCode.ProtocolError),
        "PING of 7 bytes" => (Frame(Http2FrameType.Ping, 0, 0, new byte[7]), Http2ErrorCode.FrameSizeError),
        "GOAWAY on a stream" => (Frame(Http2FrameType.GoAway, 0, 1, new byte[8]), Http2ErrorCode.ProtocolError),
        "WINDOW_UPDATE of 0 on the connection" => (Frame(Http2FrameType.WindowUpdate, 0, 0, UInt32(0)), Http2ErrorCode.ProtocolError),
        "WINDOW_UPDATE overflowing the connection window" => (Frame(Http2FrameType.WindowUpdate, 0, 0, UInt32(1)), Http2ErrorCode.FlowControlError),
        "WINDOW_UPDATE of 3 bytes" => (Frame(Http2FrameType.WindowUpdate, 0, 0, 0, 0, 1), Http2ErrorCode.FrameSizeError),
        "RST_STREAM of 3 bytes" => (Concat(Post(1), Frame(Http2FrameType.RstStream, 0, 1, 0, 0, 8)), Http2ErrorCode.FrameSizeError),
        "PUSH_PROMISE from a client" => (Concat(Post(1), Frame(Http2FrameType.PushPromise, Http2FrameFlags.EndHeaders, 1, UInt32(2))), Http2ErrorCode.ProtocolError),
        "an undecodable header block" => (Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, 0x80), Http2ErrorCode.CompressionError),
        "HEADERS on a closed stream" => ([], Http2ErrorCode.StreamClosed),
        "DATA past the connection window" => ([], Http2ErrorCode.FlowControlError),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, null),
    };

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(ConnectionErrors))]
    public async Task A_connection_error_is_answered_with_GOAWAY_and_its_code_then_the_close(string error)
    {
        var logs = new RecordingLoggerFactory();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            if (context.Request.Path == "/hold")
            {
                await release.Task;
            }

            byte[] buffer = new byte[1024];
            while (await context.Request.BodyReader.ReadAsync(buffer) > 0)
            {
            }
        }, options => options.LoggerFactory = logs);
        await using TestServer _ = host;
        using Http2Client __ = client;
        using var releasing = new Releaser(release);
        (byte[] bytes, Http2ErrorCode expected) = ConnectionCase(error);
        switch (error)
        {
            case "HEADERS on a closed stream":
                // Both sides ended stream 1 (section 5.1, closed): another HEADERS on it is a connection error.
                await client.SendAsync(Get(1));
                await client.ReadResponseAsync(1);
                await client.SendAsync(Get(1));
                break;
            case "DATA past the connection window":
                // Two streams whose handlers do not read, each within its own 768 KiB window, together past the connection's 1 MiB.
                await client.WriteHeadersAsync(1, Request("POST", "/hold"), endStream: false);
                await client.WriteHeadersAsync(3, Request("POST", "/hold"), endStream: false);
                for (int sent = 0; sent < 600 * 1024; sent += 15 * 1024)
                {
                    await client.WriteDataAsync(1, new byte[15 * 1024], endStream: false);
                    await client.WriteDataAsync(3, new byte[15 * 1024], endStream: false);
                }

                break;
            case "WINDOW_UPDATE overflowing the connection window":
                // StartAsync opened the connection window to 2^31-1 already.
                await client.SendAsync(bytes);
                break;
            default:
                await client.SendAsync(bytes);
                break;
        }

        Http2ErrorCode code = (await client.ReadGoAwayAsync()).Code;

        code.ShouldBe(expected);
        (await client.IsClosedAsync()).ShouldBeTrue();
        logs.Entries.ShouldContain(entry => entry.EventId == 60 && entry.Message.Contains(Http2Errors.GetCodeName(expected), StringComparison.Ordinal));
    }

    /// <summary>Lets held handlers finish when the test ends, however it ends.</summary>
    private sealed class Releaser(TaskCompletionSource release) : IDisposable
    {
        public void Dispose() => release.TrySetResult();
    }

    public static TheoryData<string> StreamErrors => new()
    {
        "an uppercase field name",
        "an unknown pseudo-header",
        "a response pseudo-header",
        "a pseudo-header after a regular field",
        "a connection-specific field",
        "TE other than trailers",
        "an empty :path",
        "no :method",
        "no :scheme",
        "no :path",
        "a repeated :method",
        "a repeated :path",
        "a Host that differs from :authority",
        "a :path that is not origin-form",
        "pseudo-headers in trailers",
        "trailers without END_STREAM",
        "Content-Length above the DATA received",
        "Content-Length below the DATA received",
        "DATA after END_STREAM",
        "WINDOW_UPDATE of 0 on a stream",
        "WINDOW_UPDATE overflowing a stream window",
        "PRIORITY of 4 bytes",
        "a stream that depends on itself",
        "DATA after the client reset the stream",
    };

    private static (byte[] Bytes, Http2ErrorCode Code) StreamCase(string name) => name switch
    {
        "an uppercase field name" => (Headers(Request(fields: [("X-Upper", "1")])), Http2ErrorCode.ProtocolError),
        "an unknown pseudo-header" => (Headers(Request(fields: [(":unknown", "1")])), Http2ErrorCode.ProtocolError),
        "a response pseudo-header" => (Headers(Request(fields: [(":status", "200")])), Http2ErrorCode.ProtocolError),
        "a pseudo-header after a regular field" => (Headers(Encode((":method", "GET"), (":scheme", "http"), ("accept", "*/*"), (":path", "/"))), Http2ErrorCode.ProtocolError),
        "a connection-specific field" => (Headers(Request(fields: [("connection", "keep-alive")])), Http2ErrorCode.ProtocolError),
        "TE other than trailers" => (Headers(Request(fields: [("te", "gzip")])), Http2ErrorCode.ProtocolError),
        "an empty :path" => (Headers(Encode((":method", "GET"), (":scheme", "http"), (":path", ""))), Http2ErrorCode.ProtocolError),
        "no :method" => (Headers(Encode((":scheme", "http"), (":path", "/"))), Http2ErrorCode.ProtocolError),
        "no :scheme" => (Headers(Encode((":method", "GET"), (":path", "/"))), Http2ErrorCode.ProtocolError),
        "no :path" => (Headers(Encode((":method", "GET"), (":scheme", "http"))), Http2ErrorCode.ProtocolError),
        "a repeated :method" => (Headers(Encode((":method", "GET"), (":method", "GET"), (":scheme", "http"), (":path", "/"))), Http2ErrorCode.ProtocolError),
        "a repeated :path" => (Headers(Encode((":method", "GET"), (":scheme", "http"), (":path", "/"), (":path", "/"))), Http2ErrorCode.ProtocolError),
        "a Host that differs from :authority" => (Headers(Request(authority: "a.example", fields: [("host", "b.example")])), Http2ErrorCode.ProtocolError),
        "a :path that is not origin-form" => (Headers(Request(path: "http://a.example/")), Http2ErrorCode.ProtocolError),
        "pseudo-headers in trailers" => (Concat(Post(1), FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, Encode((":method", "GET")))), Http2ErrorCode.ProtocolError),
        "trailers without END_STREAM" => (Concat(Post(1), FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, Encode(("x-trailer", "1")))), Http2ErrorCode.ProtocolError),
        "Content-Length above the DATA received" => (Concat(Post(1, ("content-length", "10")), Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, 1, 2, 3)), Http2ErrorCode.ProtocolError),
        "Content-Length below the DATA received" => (Concat(Post(1, ("content-length", "2")), Frame(Http2FrameType.Data, 0, 1, 1, 2, 3)), Http2ErrorCode.ProtocolError),
        "DATA after END_STREAM" => (Concat(FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, Request("POST", "/wait")), Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, 1)), Http2ErrorCode.StreamClosed),
        "WINDOW_UPDATE of 0 on a stream" => (Concat(Post(1), Frame(Http2FrameType.WindowUpdate, 0, 1, UInt32(0))), Http2ErrorCode.ProtocolError),
        "WINDOW_UPDATE overflowing a stream window" => (Concat(Post(1), Frame(Http2FrameType.WindowUpdate, 0, 1, UInt32(int.MaxValue))), Http2ErrorCode.FlowControlError),
        "PRIORITY of 4 bytes" => (Frame(Http2FrameType.Priority, 0, 1, 0, 0, 0, 0), Http2ErrorCode.FrameSizeError),
        "a stream that depends on itself" => (FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream | Http2FrameFlags.Priority, 1,
            Concat([0, 0, 0, 1, 16], Request())), Http2ErrorCode.ProtocolError),
        "DATA after the client reset the stream" => (Concat(Post(1), Frame(Http2FrameType.RstStream, 0, 1, UInt32(8)), Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, 1)), Http2ErrorCode.StreamClosed),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, null),
    };

    private static byte[] Headers(byte[] block) => FrameBytes(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, block);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(StreamErrors))]
    public async Task A_stream_error_resets_the_stream_with_its_code_and_the_connection_serves_on(string error)
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool handled = false;
        (TestServer host, Http2Client client) = await StartWithClientAsync(async context =>
        {
            handled |= context.StreamId == 1 && context.Request.Method == KnownMethod.Get;
            if (context.Request.Path == "/wait")
            {
                await release.Task;
            }

            byte[] buffer = new byte[1024];
            while (await context.Request.BodyReader.ReadAsync(buffer) > 0)
            {
            }
        });
        await using TestServer _ = host;
        using Http2Client __ = client;
        (byte[] bytes, Http2ErrorCode expected) = StreamCase(error);

        await client.SendAsync(bytes);
        Http2ErrorCode code = await client.ReadRstStreamAsync(1);
        release.TrySetResult();

        code.ShouldBe(expected);
        handled.ShouldBeFalse();
        await client.WriteHeadersAsync(3, Request(), endStream: true);
        (await client.ReadResponseAsync(3)).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Unknown_frame_types_and_settings_are_ignored()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default);
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.SendAsync(Concat(FrameBytes((Http2FrameType)0x42, (Http2FrameFlags)0xFF, 0, [1, 2, 3]), Frame(Http2FrameType.Settings, 0, 0, 0x7F, 0x7F, 0, 0, 0, 1)));
        await client.WriteHeadersAsync(1, Request(), endStream: true);

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_does_not_start_with_the_preface_gets_GOAWAY_on_an_HTTP_2_only_endpoint()
    {
        await using TestServer host = await StartServerAsync(_ => default, options => options.Protocols = HttpProtocols.Http2);
        using Http2Client client = Http2Client.Connect(host);

        await client.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"u8.ToArray());

        Frame first = (await client.ReadFrameAsync())!;
        first.Type.ShouldBe(Http2FrameType.Settings);
        (await client.ReadGoAwayAsync()).Code.ShouldBe(Http2ErrorCode.ProtocolError);
        (await client.IsClosedAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_malformed_request_is_reported_with_its_reason_and_the_handler_never_runs()
    {
        var logs = new RecordingLoggerFactory();
        bool called = false;
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ =>
        {
            called = true;
            return default;
        }, options => options.LoggerFactory = logs);
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.SendAsync(Headers(Request(fields: [("transfer-encoding", "chunked")])));

        (await client.ReadRstStreamAsync(1)).ShouldBe(Http2ErrorCode.ProtocolError);
        called.ShouldBeFalse();
        logs.Entries.ShouldContain(entry => entry.EventId == 62 && entry.Message.Contains("connection-specific", StringComparison.Ordinal));
        logs.Entries.ShouldContain(entry => entry.EventId == 61 && entry.Message.Contains("malformed_request", StringComparison.Ordinal));
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("CONNECT", 501)]
    [InlineData("A-METHOD-LONGER-THAN-THIRTY-TWO-BYTES", 501)]
    public async Task A_request_the_server_refuses_is_answered_with_its_status_as_on_HTTP_1_1(string method, int status)
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default);
        await using TestServer _ = host;
        using Http2Client __ = client;
        byte[] block = method == "CONNECT"
            ? Encode((":method", "CONNECT"), (":authority", "example.com:443"))
            : Request(method);

        await client.WriteHeadersAsync(1, block, endStream: true);

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(status);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_Content_Length_above_the_body_limit_is_answered_413()
    {
        (TestServer host, Http2Client client) = await StartWithClientAsync(_ => default, options => options.Limits.MaxRequestBodySize = 10);
        await using TestServer _ = host;
        using Http2Client __ = client;

        await client.WriteHeadersAsync(1, Request("POST", "/", fields: [("content-length", "11")]), endStream: false);

        (await client.ReadResponseAsync(1)).StatusCode.ShouldBe(413);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class Http2ProtocolErrorTestsOnLibuv : Http2ProtocolErrorTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests over TLS.</summary>
public sealed class Http2ProtocolErrorTestsOverTls : Http2ProtocolErrorTests
{
    protected override bool Https => true;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class Http2ProtocolErrorTestsOnIoUring : Http2ProtocolErrorTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
