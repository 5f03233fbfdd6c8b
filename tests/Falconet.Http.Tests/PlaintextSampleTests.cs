using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.Plaintext;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests;

public sealed class PlaintextSampleTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Plaintext_endpoint_answers_hello_world_with_the_techempower_headers()
    {
        await using TestServer host = await TestServer.StartAsync(new PlaintextApplication().Handle);
        using RawClient client = host.Connect();
        await client.SendAsync("GET /plaintext HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 200 OK");
        response.Header("Server").ShouldBe("Falconet");
        response.Header("Date").ShouldNotBeNull().Length.ShouldBe(29);
        response.Header("Content-Type").ShouldBe("text/plain");
        response.Header("Content-Length").ShouldBe("13");
        response.BodyText.ShouldBe("Hello, World!");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Json_endpoint_serializes_the_message_with_a_reused_writer()
    {
        await using TestServer host = await TestServer.StartAsync(new PlaintextApplication().Handle);
        using RawClient client = host.Connect();
        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync("GET /json HTTP/1.1\r\nHost: test\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.Header("Content-Type").ShouldBe("application/json");
            response.Header("Content-Length").ShouldBe("27");
            response.Header("Server").ShouldBe("Falconet");
            response.BodyText.ShouldBe("{\"message\":\"Hello, World!\"}");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Other_paths_answer_404()
    {
        await using TestServer host = await TestServer.StartAsync(new PlaintextApplication().Handle);
        using RawClient client = host.Connect();
        await client.SendAsync("GET /plaintext/more HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 404 Not Found");
        response.Header("Content-Length").ShouldBe("0");
    }

    [Fact]
    public void Arguments_default_to_port_8080_on_sockets_without_stats()
    {
        SampleArguments.TryParse(Array.Empty<string>(), out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Port.ShouldBe(8080);
        parsed.Transport.ShouldBe(TransportKind.Sockets);
        parsed.Stats.ShouldBeFalse();
    }

    [Fact]
    public void Arguments_read_port_transport_and_stats()
    {
        SampleArguments.TryParse(new[] { "--port", "9000", "--transport", "libuv", "--stats" }, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Port.ShouldBe(9000);
        parsed.Transport.ShouldBe(TransportKind.Libuv);
        parsed.Stats.ShouldBeTrue();
    }

    [Theory]
    [InlineData("--port")]
    [InlineData("--port", "70000")]
    [InlineData("--transport", "carrier-pigeon")]
    [InlineData("--verbose")]
    public void Invalid_arguments_are_rejected_with_a_message(params string[] args)
    {
        SampleArguments.TryParse(args, out _, out string? error).ShouldBeFalse();
        error.ShouldNotBeNullOrWhiteSpace();
    }

    [Fact]
    public void Libuv_transport_fails_at_start_with_a_clear_error()
    {
        var options = new FalconetServerOptions { Transport = TransportKind.Libuv };
        options.Endpoints.Add(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        var server = new FalconetServer(options, _ => default);
        Should.Throw<NotSupportedException>(() => server.StartAsync()).Message.ShouldContain("libuv");
    }
}
