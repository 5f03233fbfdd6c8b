using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests;

public sealed class ExpectContinueTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Continue_is_sent_when_the_application_reads_the_body_and_the_client_waits_for_it()
    {
        await using TestServer host = await TestServer.StartAsync(BodyHashing.EchoHashWithReader);
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
        await using TestServer host = await TestServer.StartAsync(context =>
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

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HttpClient_expect_continue_upload_arrives_byte_exact()
    {
        await using TestServer host = await TestServer.StartAsync(BodyHashing.EchoHashWithStream);
        using var http = new System.Net.Http.HttpClient { BaseAddress = host.BaseAddress, Timeout = TestTimeouts.Operation };
        http.DefaultRequestHeaders.ExpectContinue = true;
        byte[] body = Encoding.ASCII.GetBytes(new string('q', 123_456));
        using var content = new System.Net.Http.ByteArrayContent(body);
        using System.Net.Http.HttpResponseMessage response = await http.PostAsync("/", content);
        (await response.Content.ReadAsStringAsync()).ShouldBe($"{body.Length} {BodyHashing.Sha256Hex(body)}");
    }
}
