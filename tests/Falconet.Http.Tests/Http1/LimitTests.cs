using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class LimitTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Malformed_request_line_is_answered_400()
        => AssertRejectedAsync("GET/nospace\r\nHost: test\r\n\r\n", RequestRejectionReason.InvalidMethod);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Malformed_header_is_answered_400()
        => AssertRejectedAsync("GET / HTTP/1.1\r\nHost : test\r\n\r\n", RequestRejectionReason.WhitespaceBeforeColon);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Invalid_content_length_is_answered_400()
        => AssertRejectedAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 12a\r\n\r\n", RequestRejectionReason.InvalidHeaderValue);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Request_line_longer_than_the_limit_is_answered_414()
        => AssertRejectedAsync($"GET /{new string('a', 9000)} HTTP/1.1\r\nHost: test\r\n\r\n", RequestRejectionReason.RequestLineTooLong);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Header_section_larger_than_the_limit_is_answered_431()
        => AssertRejectedAsync($"GET / HTTP/1.1\r\nHost: test\r\nX-Big: {new string('b', 40_000)}\r\n\r\n", RequestRejectionReason.HeadersTooLarge);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task More_headers_than_the_limit_are_answered_431()
    {
        var request = new StringBuilder("GET / HTTP/1.1\r\nHost: test\r\n");
        for (int i = 0; i < 120; i++)
        {
            request.Append("X-H").Append(i).Append(": v\r\n");
        }

        return AssertRejectedAsync(request.Append("\r\n").ToString(), RequestRejectionReason.TooManyHeaders);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Content_length_above_the_body_limit_is_answered_413()
        => AssertRejectedAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 2000\r\n\r\n", RequestRejectionReason.BodyTooLarge,
            options => options.Limits.MaxRequestBodySize = 1000);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Unknown_transfer_coding_is_answered_501()
        => AssertRejectedAsync("POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.UnsupportedTransferCoding);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Content_length_with_transfer_encoding_is_answered_400()
        => AssertRejectedAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", RequestRejectionReason.TransferEncodingWithContentLength);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("HTTP/2.0")]
    [InlineData("HTTP/3.0")]
    [InlineData("HTTP/0.9")]
    public Task Unsupported_http_version_is_answered_505(string version)
        => AssertRejectedAsync($"GET / {version}\r\nHost: test\r\n\r\n", RequestRejectionReason.UnsupportedVersion);

    public static TheoryData<string, byte[], RequestRejectionReason> ImpossibleRequestStarts => new()
    {
        // A TLS 1.2/1.3 ClientHello's record and handshake headers: what an https:// client sends to a plain port.
        { "TLS ClientHello", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x8F, 0x3A, 0x00, 0x20], RequestRejectionReason.InvalidMethod },
        { "NUL bytes", [0x00, 0x00, 0x00, 0x00], RequestRejectionReason.InvalidMethod },
        { "space first", " GET / HTTP/1.1"u8.ToArray(), RequestRejectionReason.InvalidMethod },
        { "non-token byte in the method", "GE{T /"u8.ToArray(), RequestRejectionReason.InvalidMethod },
        { "control byte in the target", "GET /a\u0007b"u8.ToArray(), RequestRejectionReason.InvalidTargetCharacter },
        { "not an HTTP version", "GET / SSH-2.0"u8.ToArray(), RequestRejectionReason.InvalidVersion },
        { "method longer than any implemented", "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ"u8.ToArray(), RequestRejectionReason.MethodTooLong },
    };

    // Without a LF the parser used to wait for the 8 KiB limit, so such a client hung until it gave up.
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(ImpossibleRequestStarts))]
    public Task Start_of_a_line_that_can_never_be_a_request_is_answered_at_once(string name, byte[] received, RequestRejectionReason reason)
    {
        name.ShouldNotBeEmpty();
        return AssertRejectedAsync(received, reason);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Empty_lines_up_to_the_request_line_limit_are_answered_400()
        => AssertRejectedAsync(string.Concat(Enumerable.Repeat("\r\n", 4096)), RequestRejectionReason.TooManyEmptyLines);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Chunked_body_above_the_body_limit_is_answered_413_when_read()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader,
            options => options.Limits.MaxRequestBodySize = 1000);
        using RawClient client = host.Connect();
        string chunk = new('c', 800);
        await client.SendAsync($"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n320\r\n{chunk}\r\n320\r\n{chunk}\r\n0\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(413);
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Bad_request_after_good_pipelined_ones_answers_the_good_ones_first()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(context.Request.RawTarget);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET /one HTTP/1.1\r\nHost: t\r\n\r\nGET /two HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/9.9\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/one");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/two");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(505);
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class LimitTestsOnLibuv : LimitTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class LimitTestsOnIoUring : LimitTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
