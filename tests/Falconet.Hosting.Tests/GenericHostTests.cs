using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Shouldly;

namespace Falconet.Hosting.Tests;

/// <summary>Falconet on the generic host without ASP.NET Core: AddFalconet, configuration, validation, logging and stop.</summary>
public sealed class GenericHostTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Endpoints_limits_and_timeouts_come_from_the_Falconet_section()
    {
        using IHost host = Build(new()
        {
            ["Falconet:Endpoints:0"] = "http://127.0.0.1:0",
            ["Falconet:Transport"] = "Sockets",
            ["Falconet:KeepAliveTimeout"] = "00:01:00",
            ["Falconet:Limits:MaxRequestHeaderCount"] = "3",
        });
        await host.StartAsync().WaitAsync(TestTimeouts.Operation);
        FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
        server.Options.KeepAliveTimeout.ShouldBe(TimeSpan.FromMinutes(1));
        server.Transport.ShouldBeOfType<Falconet.Transport.Sockets.SocketTransportFactory>();

        using (RawClient client = RawClient.Connect(server.BoundEndpoints[0]))
        {
            await client.SendAsync("GET /hello HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello from the generic host");
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n");
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(431);
        }

        await host.StopAsync().WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Https_endpoints_and_certificates_come_from_the_section_in_the_schema_of_Kestrels()
    {
        await WithServerPemAsync(async (certificate, key) =>
        {
            using IHost host = Build(new()
            {
                // A named endpoint with its own certificate, and an address that takes the default one.
                ["Falconet:Endpoints:Secure:Url"] = "https://127.0.0.1:0",
                ["Falconet:Endpoints:Secure:Certificate:Path"] = certificate,
                ["Falconet:Endpoints:Secure:Certificate:KeyPath"] = key,
                ["Falconet:Endpoints:Other"] = "https://127.0.0.1:0",
                ["Falconet:Certificates:Default:Path"] = certificate,
                ["Falconet:Certificates:Default:KeyPath"] = key,
                ["Falconet:EndpointDefaults:SslProtocols:0"] = "Tls13",
            });
            await host.StartAsync().WaitAsync(TestTimeouts.Operation);
            FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
            server.BoundEndpoints.ShouldBeEmpty();
            server.BoundHttpsEndpoints.Count.ShouldBe(2);
            foreach (System.Net.IPEndPoint endpoint in server.BoundHttpsEndpoints)
            {
                using RawClient client = RawClient.ConnectTls(endpoint);
                client.Tls!.SslProtocol.ShouldBe(System.Security.Authentication.SslProtocols.Tls13);
                await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
                (await client.ReadResponseAsync()).BodyText.ShouldBe("hello from the generic host");
            }

            await host.StopAsync().WaitAsync(TestTimeouts.Operation);
        });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_TLS_engine_comes_from_the_endpoint_defaults_unless_an_endpoint_names_its_own()
    {
        await WithServerPemAsync(async (certificate, key) =>
        {
            using IHost host = Build(new()
            {
                ["Falconet:Endpoints:Fast:Url"] = "https://127.0.0.1:0",
                ["Falconet:Endpoints:Fast:Certificate:Path"] = certificate,
                ["Falconet:Endpoints:Fast:Certificate:KeyPath"] = key,
                ["Falconet:Endpoints:Managed:Url"] = "https://127.0.0.1:0",
                ["Falconet:Endpoints:Managed:Certificate:Path"] = certificate,
                ["Falconet:Endpoints:Managed:Certificate:KeyPath"] = key,
                ["Falconet:Endpoints:Managed:TlsEngine"] = "sslstream",
                ["Falconet:EndpointDefaults:TlsEngine"] = "OpenSsl",
            });
            await host.StartAsync().WaitAsync(TestTimeouts.Operation);
            FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
            server.Options.HttpsEndpoints.Select(e => e.Tls.Engine).Order().ShouldBe([TlsEngine.SslStream, TlsEngine.OpenSsl]);
            foreach (System.Net.IPEndPoint endpoint in server.BoundHttpsEndpoints)
            {
                using RawClient client = RawClient.ConnectTls(endpoint);
                await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
                (await client.ReadResponseAsync()).BodyText.ShouldBe("hello from the generic host");
            }

            await host.StopAsync().WaitAsync(TestTimeouts.Operation);
        });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_endpoint_configured_with_the_Auto_engine_or_none_runs_Auto_and_logs_the_engine_it_chose()
    {
        await WithServerPemAsync(async (certificate, key) =>
        {
            var logs = new CapturingLoggerProvider();
            using IHost host = Build(new()
            {
                ["Falconet:Endpoints:Named:Url"] = "https://127.0.0.1:0",
                ["Falconet:Endpoints:Named:Certificate:Path"] = certificate,
                ["Falconet:Endpoints:Named:Certificate:KeyPath"] = key,
                ["Falconet:Endpoints:Named:TlsEngine"] = "Auto",
                ["Falconet:Endpoints:Unnamed:Url"] = "https://127.0.0.1:0",
                ["Falconet:Endpoints:Unnamed:Certificate:Path"] = certificate,
                ["Falconet:Endpoints:Unnamed:Certificate:KeyPath"] = key,
            }, builder => builder.Logging.AddProvider(logs));
            await host.StartAsync().WaitAsync(TestTimeouts.Operation);
            FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
            server.Options.HttpsEndpoints.Select(e => e.Tls.Engine).ShouldBe([TlsEngine.Auto, TlsEngine.Auto]);
            foreach (System.Net.IPEndPoint endpoint in server.BoundHttpsEndpoints)
            {
                using RawClient client = RawClient.ConnectTls(endpoint);
                await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
                (await client.ReadResponseAsync()).BodyText.ShouldBe("hello from the generic host");
                logs.Entries.ShouldContain(e => e.Message == $"HTTPS on https://{endpoint}: TLS engine OpenSsl (auto)");
            }

            await host.StopAsync().WaitAsync(TestTimeouts.Operation);
        });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_server_logs_through_the_hosts_logger_factory()
    {
        var logs = new CapturingLoggerProvider();
        using IHost host = Build(new() { ["Falconet:Endpoints:0"] = "127.0.0.1:0" }, builder => builder.Logging.AddProvider(logs));
        await host.StartAsync().WaitAsync(TestTimeouts.Operation);
        await host.StopAsync().WaitAsync(TestTimeouts.Operation);

        logs.Entries.ShouldContain(e => e.Category == "Falconet.Server" && e.Message.StartsWith("Listening on 127.0.0.1:", StringComparison.Ordinal));
        logs.Entries.ShouldContain(e => e.Category == "Falconet.Server" && e.Message == "Stopped");
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("Falconet:KeepAliveTimout", "00:00:10", "Falconet:KeepAliveTimout: there is no such Falconet option")]
    [InlineData("Falconet:Endpoints:0", "localhost", "Falconet:Endpoints:0: 'localhost' is not an endpoint")]
    [InlineData("Falconet:RequestHeadersTimeout", "soon", "Falconet:RequestHeadersTimeout: 'soon' is not a valid TimeSpan")]
    [InlineData("Falconet:RequestHeadersTimeout", "-00:00:01", "Falconet:RequestHeadersTimeout is -00:00:01: it must be positive")]
    [InlineData("Falconet:Limits:MaxRequestHeaderCount", "0", "Falconet:Limits:MaxRequestHeaderCount: 0 is refused")]
    [InlineData("Falconet:OutputBufferLimit", "0", "Falconet:OutputBufferLimit is 0: it must be more than 0.")]
    [InlineData("Falconet:Transport", "Carrier", "Falconet:Transport: 'Carrier' is not a valid TransportKind")]
    public async Task Invalid_configuration_fails_the_start_with_a_message_naming_the_key(string key, string value, string message)
    {
        var settings = new Dictionary<string, string?> { ["Falconet:Endpoints:0"] = "127.0.0.1:0" };
        settings[key] = value;

        using IHost host = Build(settings);
        OptionsValidationException failure = await Should.ThrowAsync<OptionsValidationException>(() => host.StartAsync().WaitAsync(TestTimeouts.Operation));
        failure.Message.ShouldContain(message);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_host_without_endpoints_fails_the_start_and_says_what_to_add()
    {
        using IHost host = Build(new());
        OptionsValidationException failure = await Should.ThrowAsync<OptionsValidationException>(() => host.StartAsync().WaitAsync(TestTimeouts.Operation));
        failure.Message.ShouldContain("Falconet:Endpoints is empty");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stopping_the_host_lets_a_request_in_flight_finish_within_the_hosts_shutdown_timeout()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            new() { ["Falconet:Endpoints:0"] = "127.0.0.1:0" },
            builder => builder.Services.Configure<HostOptions>(options => options.ShutdownTimeout = TimeSpan.FromSeconds(20)),
            async context =>
            {
                entered.TrySetResult();
                await release.Task;
                context.Response.Write("finished"u8);
            });
        await host.StartAsync().WaitAsync(TestTimeouts.Operation);
        FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
        server.Options.ShutdownTimeout.ShouldBe(TimeSpan.FromSeconds(20));

        using RawClient client = RawClient.Connect(server.BoundEndpoints[0]);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        Task stopping = host.StopAsync();
        await Task.Delay(200);
        stopping.IsCompleted.ShouldBeFalse();
        release.TrySetResult();
        (await client.ReadResponseAsync()).BodyText.ShouldBe("finished");
        await stopping.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_drain_delay_comes_out_of_the_hosts_shutdown_timeout_so_in_flight_requests_keep_the_rest()
    {
        using IHost host = Build(
            new() { ["Falconet:Endpoints:0"] = "127.0.0.1:0", ["Falconet:DrainDelay"] = "00:00:05" },
            builder => builder.Services.Configure<HostOptions>(options => options.ShutdownTimeout = TimeSpan.FromSeconds(20)));
        await host.StartAsync().WaitAsync(TestTimeouts.Operation);
        FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
        server.Options.DrainDelay.ShouldBe(TimeSpan.FromSeconds(5));
        server.Options.ShutdownTimeout.ShouldBe(TimeSpan.FromSeconds(15));
        await host.StopAsync().WaitAsync(TestTimeouts.Operation);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("00:00:30", null, "Falconet:DrainDelay is 00:00:30, and the host's ShutdownTimeout is 00:00:30: the host would end the stop before in-flight requests get any time to finish")]
    [InlineData("00:01:00", null, "Falconet:DrainDelay is 00:01:00, and the host's ShutdownTimeout is 00:00:30")]
    [InlineData("00:00:10", "00:00:25", "Falconet:DrainDelay (00:00:10) plus Falconet:ShutdownTimeout (00:00:25) is more than the host's ShutdownTimeout (00:00:30)")]
    public async Task A_drain_delay_that_leaves_requests_less_than_asked_inside_the_hosts_shutdown_timeout_fails_the_start(
        string drainDelay, string? shutdownTimeout, string message)
    {
        var settings = new Dictionary<string, string?> { ["Falconet:Endpoints:0"] = "127.0.0.1:0", ["Falconet:DrainDelay"] = drainDelay };
        if (shutdownTimeout is not null)
        {
            settings["Falconet:ShutdownTimeout"] = shutdownTimeout;
        }

        // The host's own default shutdown timeout: 30 s.
        using IHost host = Build(settings);
        host.Services.GetRequiredService<IOptions<HostOptions>>().Value.ShutdownTimeout.ShouldBe(TimeSpan.FromSeconds(30));
        OptionsValidationException failure = await Should.ThrowAsync<OptionsValidationException>(() => host.StartAsync().WaitAsync(TestTimeouts.Operation));
        failure.Message.ShouldContain(message);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_request_in_flight_when_the_stop_begins_is_served_through_the_drain_delay_and_after_it()
    {
        // Host 3 s, drain delay 1 s: the server's own timeout is the 2 s left. The request answers 2 s after the stop began
        // (timed from the stop, not from its start, so a loaded machine does not move it before the drain delay ends):
        // after the drain delay, so with Connection: close, and within the timeout, so it finishes.
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var stopBegun = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            new() { ["Falconet:Endpoints:0"] = "127.0.0.1:0", ["Falconet:DrainDelay"] = "00:00:01" },
            builder => builder.Services.Configure<HostOptions>(options => options.ShutdownTimeout = TimeSpan.FromSeconds(3)),
            async context =>
            {
                entered.TrySetResult();
                await stopBegun.Task;
                await Task.Delay(2_000);
                context.Response.Write("finished"u8);
            });
        await host.StartAsync().WaitAsync(TestTimeouts.Operation);
        FalconetServer server = host.Services.GetRequiredService<FalconetHostedService>().Server!;
        server.Options.ShutdownTimeout.ShouldBe(TimeSpan.FromSeconds(2));

        using RawClient client = RawClient.Connect(server.BoundEndpoints[0]);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        Task stopping = host.StopAsync();
        stopBegun.SetResult();
        server.IsReady.ShouldBeFalse();
        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldBe("finished");
        response.Header("Connection").ShouldBe("close");
        await stopping.WaitAsync(TestTimeouts.Operation);
    }

    [Fact]
    public void The_hosting_package_does_not_depend_on_ASP_NET_Core()
        => typeof(FalconetHostedService).Assembly.GetReferencedAssemblies()
            .ShouldNotContain(name => name.Name!.StartsWith("Microsoft.AspNetCore", StringComparison.Ordinal));

    private static IHost Build(Dictionary<string, string?> settings, Action<HostApplicationBuilder>? configure = null,
        Func<HttpContext, ValueTask>? handler = null)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddFalconet(handler ?? (context =>
        {
            context.Response.Write("hello from the generic host"u8);
            return default;
        }));
        configure?.Invoke(builder);
        return builder.Build();
    }

    /// <summary>Runs <paramref name="test"/> with the test server certificate and key written as PEM files, deleted after.</summary>
    private static async Task WithServerPemAsync(Func<string, string, Task> test)
    {
        string folder = System.IO.Directory.CreateTempSubdirectory("falconet-hosting-").FullName;
        try
        {
            string certificate = System.IO.Path.Combine(folder, "server.pem");
            string key = System.IO.Path.Combine(folder, "server.key.pem");
            TestCertificates.WritePem(TestCertificates.Server, certificate, key);
            await test(certificate, key);
        }
        finally
        {
            System.IO.Directory.Delete(folder, recursive: true);
        }
    }
}
