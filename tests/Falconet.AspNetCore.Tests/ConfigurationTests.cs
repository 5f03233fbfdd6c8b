using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// The "Falconet" configuration section under ASP.NET Core: Kestrel's names of the limits move over as they are, and what
/// Falconet cannot honour fails the start with a message that names the key (Kestrel's section lets some of it through).
/// </summary>
public sealed class ConfigurationTests : IDisposable
{
    private readonly CertificateFiles _files = new();

    public void Dispose() => _files.Dispose();

    private static Task<AspNetTestApp> StartAsync(Dictionary<string, string?> settings, string[]? args = null)
        => AspNetTestApp.StartAsync(WebServer.FalconetSockets, app => app.MapGet("/", () => "configured"),
            builder => builder.Configuration.AddInMemoryCollection(settings), args ?? ["--urls", "http://127.0.0.1:0"]);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Kestrel_names_of_limits_and_timeouts_set_the_Falconet_options_they_mean()
    {
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Falconet:Limits:MaxRequestHeadersTotalSize"] = "4096",
            ["Falconet:Limits:KeepAliveTimeout"] = "00:00:42",
            ["Falconet:Limits:MaxConcurrentConnections"] = "77",
            ["Falconet:Limits:MaxRequestBodySize"] = "1000",
            ["Falconet:AllowSynchronousIO"] = "true",
        });

        FalconetServerOptions options = host.Server.Server!.Options;
        options.Limits.MaxRequestHeadersSize.ShouldBe(4096);
        options.KeepAliveTimeout.ShouldBe(TimeSpan.FromSeconds(42));
        options.MaxConnections.ShouldBe(77);
        options.Limits.MaxRequestBodySize.ShouldBe(1000);
        options.AllowSynchronousWrites.ShouldBeTrue();
        (await host.Http.GetStringAsync("")).ShouldBe("configured");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Configured_endpoints_win_over_the_urls_as_on_Kestrel()
    {
        await using AspNetTestApp host = await StartAsync(new() { ["Falconet:Endpoints:Plain:Url"] = "http://127.0.0.1:0" },
            args: ["--urls", "http://0.0.0.0:0"]);

        host.Addresses.Single().Host.ShouldBe("127.0.0.1");
        host.Logs.Entries.ShouldContain(e => e.EventId == 504);
    }

    public static TheoryData<string, string, string> Misconfigurations => new()
    {
        { "Falconet:Endpoints:Secure:Protocols", "Http1AndHttp2AndHttp3", "Falconet:Endpoints:Secure:Protocols is 'Http1AndHttp2AndHttp3': Falconet serves Http1, Http2 and Http1AndHttp2 (no HTTP/3)" },
        { "Falconet:EndpointDefaults:Protocols", "Http3", "Falconet:EndpointDefaults:Protocols is 'Http3'" },
        { "Falconet:Endpoints:Secure:ClientCertificateMode", "DelayCertificate", "does not renegotiate" },
        { "Falconet:Endpoints:Secure:SslProtocols", "Tls14", "'Tls14' is not a TLS version" },
        { "Falconet:Endpoints:Secure:TlsEngine", "BoringSsl", "Falconet:Endpoints:Secure:TlsEngine: 'BoringSsl' is not a TLS engine: use Auto, OpenSsl or SslStream." },
        { "Falconet:EndpointDefaults:TlsEngine", "1", "Falconet:EndpointDefaults:TlsEngine: '1' is not a TLS engine" },
        { "Falconet:Endpoints:Secure:Certificate:Path", "/nonexistent/cert.pfx", "Falconet:Endpoints:Secure:Certificate: The certificate '/nonexistent/cert.pfx'" },
        { "Falconet:Endpoints:Secure:Sni:a.test:SslProtocols", "Tls13", "Falconet:Endpoints:Secure:Sni:a.test:SslProtocols: Falconet takes this setting per endpoint" },
        { "Falconet:Endpoints:Secure:Urll", "https://127.0.0.1:0", "Falconet:Endpoints:Secure:Urll: there is no such endpoint setting" },
        { "Falconet:Endpoints:Plain:Url", "http://unix:app.sock", "Falconet:Endpoints:Plain:Url: 'http://unix:app.sock': write the Unix socket's absolute path" },
        { "Falconet:Endpoints:Plain:Url", "http://example.com:80", "names a host" },
        { "Falconet:Certificates:Development:Password", "x", "Falconet:Certificates:Development: there is no such certificate setting" },
        { "Falconet:Limits:Http2:MaxStreamsPerConnection", "10", "Falconet:Limits:Http2: there is no such Falconet option" },
        { "Falconet:UnixSocketPermissions", "680", "Falconet:UnixSocketPermissions: '680' is not an octal file mode" },
        { "Falconet:UnixSocketPermissions", "UserRead, Everyone", "Falconet:UnixSocketPermissions: 'UserRead, Everyone' is not a file mode" },
        { "Falconet:AddServerHeader", "false", "Falconet:AddServerHeader: there is no such Falconet option" },
    };

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(Misconfigurations))]
    public async Task What_Falconet_cannot_honour_fails_the_start_with_a_message_naming_the_key(string key, string value, string message)
    {
        (string certificate, string privateKey) = _files.WritePem(TestCertificates.Server, "server");
        var settings = new Dictionary<string, string?>
        {
            ["Falconet:Endpoints:Secure:Url"] = "https://127.0.0.1:0",
            ["Falconet:Endpoints:Secure:Certificate:Path"] = certificate,
            ["Falconet:Endpoints:Secure:Certificate:KeyPath"] = privateKey,
            [key] = value,
        };
        if (key.Contains(":Sni:", StringComparison.Ordinal))
        {
            settings["Falconet:Endpoints:Secure:Sni:a.test:Certificate:Path"] = certificate;
            settings["Falconet:Endpoints:Secure:Sni:a.test:Certificate:KeyPath"] = privateKey;
        }

        OptionsValidationException failure = await Should.ThrowAsync<OptionsValidationException>(() => StartAsync(settings));
        failure.Message.ShouldContain(message);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(WebServer.Kestrel, "http")]
    [InlineData(WebServer.FalconetSockets, "http")]
    [InlineData(WebServer.FalconetLibuv, "http")]
    [InlineData(WebServer.FalconetSockets, "https")]
    [InlineData(WebServer.FalconetLibuv, "https")]
    public async Task An_endpoint_that_cannot_be_bound_fails_the_start_with_a_message_naming_it(WebServer server, string scheme)
    {
        using var taken = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        taken.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        taken.Listen();
        string address = $"{scheme}://{taken.LocalEndPoint}";

        Exception failure = await Should.ThrowAsync<Exception>(() => AspNetTestApp.StartAsync(server, app => app.MapGet("/", () => "never"),
            builder => builder.WebHost.ConfigureFalconetHttpsDefaults(tls => tls.ServerCertificate = TestCertificates.Server),
            ["--urls", address]));
        failure.Message.ShouldContain(address);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_certificate_on_an_http_endpoint_fails_the_start_instead_of_being_ignored()
    {
        (string certificate, string privateKey) = _files.WritePem(TestCertificates.Server, "server");
        OptionsValidationException failure = await Should.ThrowAsync<OptionsValidationException>(() => StartAsync(new()
        {
            ["Falconet:Endpoints:Plain:Url"] = "http://127.0.0.1:0",
            ["Falconet:Endpoints:Plain:Certificate:Path"] = certificate,
            ["Falconet:Endpoints:Plain:Certificate:KeyPath"] = privateKey,
        }));
        failure.Message.ShouldContain("Falconet:Endpoints:Plain:Certificate: applies to https endpoints only");
    }
}
