using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class ExpectContinueTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Continue_is_sent_when_the_application_reads_the_body_and_the_client_waits_for_it()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);
        using RawClient client = host.Connect();
        byte[] body = BodyHashing.RandomBytes(50_000, 9);
        await client.SendAsync($"PUT /upload HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: {body.Length}\r\n\r\n");

        RawResponse interim = await client.ReadResponseAsync();
        interim.StatusLine.ShouldBe("HTTP/1.1 100 Continue");

        await client.SendAsync(body);
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");

        await client.SendAsync("GET /next HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Continue_is_not_sent_when_the_application_never_reads_the_body()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.StatusCode = 401;
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("POST /upload HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 401 Unauthorized");
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("GET / HTTP/1.1\r\nHost: test\r\nExpect: something-else\r\n\r\n")]
    [InlineData("GET / HTTP/1.0\r\nExpect: something-else\r\n\r\n")]
    [InlineData("POST / HTTP/1.1\r\nHost: test\r\nExpect: 100-continue, x-extension\r\nContent-Length: 5\r\n\r\n")]
    [InlineData("POST / HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nExpect: 100-continue=1\r\nContent-Length: 5\r\n\r\n")]
    [InlineData("PUT / HTTP/1.1\r\nHost: test\r\nExpect: 200-ok\r\nTransfer-Encoding: chunked\r\n\r\n")]
    public Task Expectation_other_than_100_continue_is_answered_417_and_the_body_is_not_awaited(string request)
        => AssertRejectedAsync(request, RequestRejectionReason.UnsupportedExpectation);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Continue_expectation_is_matched_case_insensitively_and_empty_members_are_skipped()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithReader);
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nExpect: , 100-Continue ,\r\nContent-Length: 3\r\n\r\n");
        (await client.ReadResponseAsync()).StatusLine.ShouldBe("HTTP/1.1 100 Continue");
        await client.SendAsync("abc");
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"3 {BodyHashing.Sha256Hex("abc"u8)}");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HttpClient_expect_continue_upload_arrives_byte_exact()
    {
        await using TestServer host = await StartServerAsync(BodyHashing.EchoHashWithStream);
        using System.Net.Http.HttpClient http = host.CreateHttpClient();
        http.DefaultRequestHeaders.ExpectContinue = true;
        byte[] body = Encoding.ASCII.GetBytes(new string('q', 123_456));
        using var content = new System.Net.Http.ByteArrayContent(body);
        using System.Net.Http.HttpResponseMessage response = await http.PostAsync("/", content);
        (await response.Content.ReadAsStringAsync()).ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ExpectContinueTestsOnLibuv : ExpectContinueTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ExpectContinueTestsOnIoUring : ExpectContinueTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
