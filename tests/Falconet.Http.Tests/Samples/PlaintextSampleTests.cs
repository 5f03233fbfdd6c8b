using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.Plaintext;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Samples;

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

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("POST", "/plaintext")]
    [InlineData("PUT", "/json")]
    [InlineData("DELETE", "/plaintext")]
    [InlineData("OPTIONS", "/json")]
    [InlineData("get", "/plaintext")]
    [InlineData("BREW", "/json")]
    public async Task Other_methods_on_the_endpoints_answer_405_with_Allow(string method, string path)
    {
        await using TestServer host = await TestServer.StartAsync(new PlaintextApplication().Handle);
        using RawClient client = host.Connect();
        await client.SendAsync($"{method} {path} HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 405 Method Not Allowed");
        response.Header("Allow").ShouldBe("GET, HEAD");
        response.Header("Content-Length").ShouldBe("0");
        response.Header("Content-Type").ShouldBeNull();

        // The connection stays usable.
        await client.SendAsync($"GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("/plaintext", "text/plain", "13")]
    [InlineData("/json", "application/json", "27")]
    public async Task Head_on_the_endpoints_answers_the_get_headers_without_a_body(string path, string contentType, string contentLength)
    {
        await using TestServer host = await TestServer.StartAsync(new PlaintextApplication().Handle);
        using RawClient client = host.Connect();
        await client.SendAsync($"HEAD {path} HTTP/1.1\r\nHost: test\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse head = await client.ReadResponseAsync(headRequest: true);
        head.StatusLine.ShouldBe("HTTP/1.1 200 OK");
        head.Header("Content-Type").ShouldBe(contentType);
        head.Header("Content-Length").ShouldBe(contentLength);

        // Had the HEAD response carried a body, this response would be read from inside it.
        (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");
    }

    [Fact]
    public void Json_writer_parked_on_the_thread_does_not_keep_the_last_response_alive()
    {
        WeakReference written = WriteJsonToAFreshTarget(out string json);
        json.ShouldBe("{\"message\":\"Hello, World!\"}");

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();

        // Only the [ThreadStatic] writer could still reach the target: it must have let go.
        written.IsAlive.ShouldBeFalse();

        // And the parked writer is reused for the next response.
        WriteJsonToAFreshTarget(out string again);
        again.ShouldBe(json);
    }

    // Not inlined, so that no local of the caller keeps the target reachable.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference WriteJsonToAFreshTarget(out string json)
    {
        var target = new ArrayBufferWriter<byte>();
        PlaintextApplication.WriteJson(target);
        json = Encoding.UTF8.GetString(target.WrittenSpan);
        return new WeakReference(target);
    }

    [Fact]
    public void Arguments_default_to_port_8080_and_the_server_defaults_without_stats()
    {
        SampleArguments.TryParse(Array.Empty<string>(), out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Port.ShouldBe(8080);
        parsed.Transport.ShouldBeNull();
        parsed.Scheduling.ShouldBeNull();
        parsed.Distribution.ShouldBeNull();
        parsed.IoThreads.ShouldBeNull();
        parsed.Stats.ShouldBeFalse();
    }

    [Fact]
    public void The_io_thread_count_is_read_for_the_load_harness_scaling_runs()
    {
        SampleArguments.TryParse(new[] { "--io-threads", "2" }, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.IoThreads.ShouldBe(2);
    }

    [Theory]
    [InlineData("reuseport", Falconet.Transport.Libuv.LibuvDistribution.ReusePort)]
    [InlineData("HandOff", Falconet.Transport.Libuv.LibuvDistribution.Handoff)]
    public void A_libuv_distribution_selects_libuv_and_how_it_spreads_connections(string value, Falconet.Transport.Libuv.LibuvDistribution expected)
    {
        SampleArguments.TryParse(new[] { "--libuv-distribution", value }, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Distribution.ShouldBe(expected);
        parsed.Transport.ShouldBe(TransportKind.Libuv);
    }

    [Theory]
    [InlineData("iouring", false)]
    [InlineData("IOURING", false)]
    [InlineData(null, true)]
    public void The_io_uring_transport_is_named_iouring_and_submission_polling_selects_it(string? transport, bool polling)
    {
        string[] args = transport is null ? ["--iouring-sqpoll"] : ["--transport", transport];
        SampleArguments.TryParse(args, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Transport.ShouldBe(TransportKind.IoUring);
        parsed.SubmissionPolling.ShouldBe(polling);
    }

    [Fact]
    public void The_batch_wait_selects_io_uring_with_batched_turns_and_refuses_what_it_cannot_honour()
    {
        SampleArguments.TryParse(["--iouring-batch-wait", "150"], out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Transport.ShouldBe(TransportKind.IoUring);
        parsed.BatchedTurnWait.ShouldBe(TimeSpan.FromMicroseconds(150));
        SampleArguments.TryParse(["--port", "1"], out SampleArguments? defaults, out _).ShouldBeTrue();
        defaults.BatchedTurnWait.ShouldBeNull();
        foreach (string bad in new[] { "0", "10001", "-5", "soon" })
        {
            SampleArguments.TryParse(["--iouring-batch-wait", bad], out _, out string? error).ShouldBeFalse();
            error.ShouldBe("--iouring-batch-wait needs a number of microseconds from 1 to 10000.");
        }
    }

    [Fact]
    public void An_unknown_transport_is_refused_with_the_three_names()
    {
        SampleArguments.TryParse(["--transport", "epoll"], out _, out string? error).ShouldBeFalse();
        error.ShouldBe("--transport is 'sockets', 'libuv' or 'iouring'.");
    }

    [Fact]
    public void Arguments_read_port_transport_scheduling_and_stats()
    {
        SampleArguments.TryParse(new[] { "--port", "9000", "--transport", "libuv", "--scheduling", "IoThreads", "--stats" }, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed.Port.ShouldBe(9000);
        parsed.Transport.ShouldBe(TransportKind.Libuv);
        parsed.Scheduling.ShouldBe(Falconet.Transport.IoScheduling.IoThreads);
        parsed.Stats.ShouldBeTrue();
    }

    [Fact]
    public void Arguments_read_an_https_port_with_PEM_files_or_a_PFX()
    {
        SampleArguments.TryParse(new[] { "--https-port", "8443", "--https-cert", "cert.pem", "--https-key", "key.pem" }, out SampleArguments? pem, out _).ShouldBeTrue();
        pem.HttpsPort.ShouldBe(8443);
        pem.HttpsCertificate.ShouldBe("cert.pem");
        pem.HttpsKey.ShouldBe("key.pem");

        SampleArguments.TryParse(new[] { "--https-port", "0", "--https-pfx", "site.pfx", "--https-password", "secret" }, out SampleArguments? pfx, out _).ShouldBeTrue();
        pfx.HttpsPort.ShouldBe(0);
        pfx.HttpsPfx.ShouldBe("site.pfx");
        pfx.HttpsPassword.ShouldBe("secret");
    }

    [Theory]
    [InlineData("--https-port", "8443")]
    [InlineData("--https-cert", "cert.pem", "--https-key", "key.pem")]
    [InlineData("--https-port", "8443", "--https-cert", "cert.pem")]
    [InlineData("--https-port", "8443", "--https-pfx", "a.pfx", "--https-cert", "cert.pem", "--https-key", "key.pem")]
    [InlineData("--https-port", "-1", "--https-pfx", "a.pfx")]
    [InlineData("--https-port", "8443", "--https-key")]
    public void Incomplete_https_arguments_are_rejected_with_a_message(params string[] args)
    {
        SampleArguments.TryParse(args, out _, out string? error).ShouldBeFalse();
        error.ShouldNotBeNullOrWhiteSpace();
    }

    [Theory]
    [InlineData("auto", BatchScheduling.Auto)]
    [InlineData("ON", BatchScheduling.On)]
    [InlineData("off", BatchScheduling.Off)]
    public void Batch_scheduling_is_parsed(string value, BatchScheduling expected)
    {
        SampleArguments.TryParse(new[] { "--batch-scheduling", value }, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed!.BatchScheduling.ShouldBe(expected);
        SampleArguments.TryParse(Array.Empty<string>(), out SampleArguments? defaults, out _).ShouldBeTrue();
        defaults!.BatchScheduling.ShouldBe(BatchScheduling.Auto);
    }

    [Theory]
    [InlineData("sslstream", TlsEngine.SslStream)]
    [InlineData("Auto", TlsEngine.Auto)]
    [InlineData("OpenSSL", TlsEngine.OpenSsl)]
    public void The_TLS_engine_is_parsed(string value, TlsEngine expected)
    {
        SampleArguments.TryParse(new[] { "--tls-engine", value }, out SampleArguments? parsed, out _).ShouldBeTrue();
        parsed!.TlsEngine.ShouldBe(expected);
        SampleArguments.TryParse(Array.Empty<string>(), out SampleArguments? defaults, out _).ShouldBeTrue();
        defaults!.TlsEngine.ShouldBe(TlsEngine.Auto);
    }

    [Theory]
    [InlineData("--port")]
    [InlineData("--port", "70000")]
    [InlineData("--transport", "carrier-pigeon")]
    [InlineData("--scheduling", "fibers")]
    [InlineData("--batch-scheduling", "sometimes")]
    [InlineData("--batch-scheduling", "1")]
    [InlineData("--batch-scheduling")]
    [InlineData("--tls-engine", "gnutls")]
    [InlineData("--tls-engine")]
    [InlineData("--libuv-distribution", "random")]
    [InlineData("--io-threads", "0")]
    [InlineData("--io-threads")]
    [InlineData("--verbose")]
    public void Invalid_arguments_are_rejected_with_a_message(params string[] args)
    {
        SampleArguments.TryParse(args, out _, out string? error).ShouldBeFalse();
        error.ShouldNotBeNullOrWhiteSpace();
    }

    [Fact]
    public void A_missing_libuv_is_an_error_that_names_the_package_to_install()
    {
        // The same check the factory runs at start, pointed at a library name that is not installed anywhere.
        var error = Should.Throw<DllNotFoundException>(() => Falconet.Transport.Libuv.LibuvTransportFactory.EnsureLoaded("libuv-falconet-absent.so.1"));
        error.Message.ShouldContain("libuv-falconet-absent.so.1");
        error.Message.ShouldContain("apt-get install libuv1");
    }

    [Fact]
    public void The_installed_libuv_loads_and_reports_its_version()
    {
        Falconet.Transport.Libuv.LibuvTransportFactory.EnsureLoaded("libuv.so.1").ShouldStartWith("1.");
    }
}
