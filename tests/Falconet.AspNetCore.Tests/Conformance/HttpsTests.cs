using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.Configuration;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Conformance;

/// <summary>
/// HTTPS configured the way ASP.NET Core applications already do it, on Kestrel and on Falconet (the derived classes): the same
/// configuration keys under "Kestrel" or "Falconet", https addresses with a default certificate, SNI, TLS versions, client
/// certificates, endpoints added in code, and the TLS features, over real TLS connections (HttpClient, SslStream, curl).
/// </summary>
public abstract class HttpsTests : IDisposable
{
    private readonly CertificateFiles _files = new();

    protected abstract WebServer Server { get; }

    private string Section => AspNetTestApp.ConfigurationSection(Server);

    /// <summary>
    /// The SNI host name ITlsHandshakeFeature reports on an endpoint with one certificate: Falconet reports what the client
    /// sent; Kestrel reports it only when it chooses the certificate by name (SNI configured).
    /// </summary>
    private string HostNameOf(string sent) => Server == WebServer.Kestrel ? string.Empty : sent;

    public void Dispose() => _files.Dispose();

    private Task<AspNetTestApp> StartAsync(Dictionary<string, string?> settings, Action<WebApplicationBuilder>? configure = null, string[]? args = null)
        => AspNetTestApp.StartAsync(Server, MapEndpoints, builder =>
        {
            builder.Configuration.AddInMemoryCollection(settings.ToDictionary(s => Section + ":" + s.Key, s => s.Value));
            configure?.Invoke(builder);
        }, args ?? []);

    /// <summary>What the application sees of the connection: scheme, TLS version, SNI host name, ALPN and client certificate.</summary>
    private static void MapEndpoints(WebApplication app) => app.MapGet("/tls", (HttpContext context) =>
    {
        // Read first: the framework's ConnectionInfo adds an empty ITlsConnectionFeature when it finds none.
        bool tlsFeature = context.Features.Get<ITlsConnectionFeature>() is not null;
        ITlsHandshakeFeature? handshake = context.Features.Get<ITlsHandshakeFeature>();
        ITlsApplicationProtocolFeature? alpn = context.Features.Get<ITlsApplicationProtocolFeature>();
        return string.Join('|',
            context.Request.Scheme,
            context.Request.IsHttps,
            handshake?.Protocol.ToString() ?? "-",
            handshake?.HostName ?? "-",
            handshake?.NegotiatedCipherSuite is null ? "-" : "suite",
            alpn is null ? "-" : System.Text.Encoding.ASCII.GetString(alpn.ApplicationProtocol.Span),
            context.Connection.ClientCertificate?.Subject ?? "-",
            tlsFeature ? "tls-feature" : "no-tls-feature");
    });

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Named_endpoints_from_configuration_serve_http_and_https_from_a_PEM_certificate_and_key()
    {
        (string certificate, string key) = _files.WritePem(TestCertificates.Server, "server");
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Endpoints:Plain:Url"] = "http://127.0.0.1:0",
            ["Endpoints:Secure:Url"] = "https://127.0.0.1:0",
            ["Endpoints:Secure:Protocols"] = "Http1",
            ["Endpoints:Secure:Certificate:Path"] = certificate,
            ["Endpoints:Secure:Certificate:KeyPath"] = key,
        });

        (await host.Http.GetStringAsync(new Uri(host.Address("https"), "tls"))).ShouldBe("https|True|Tls13||suite||-|tls-feature");
        (await host.Http.GetStringAsync(new Uri(host.Address("http"), "tls"))).ShouldBe("http|False|-|-|-|-|-|no-tls-feature");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_PFX_certificate_with_a_password_serves_https()
    {
        string pfx = _files.WritePfx(TestCertificates.Server, "server", "s3cret");
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Endpoints:Secure:Url"] = "https://127.0.0.1:0",
            ["Endpoints:Secure:Protocols"] = "Http1",
            ["Endpoints:Secure:Certificate:Path"] = pfx,
            ["Endpoints:Secure:Certificate:Password"] = "s3cret",
        });

        (await host.Http.GetStringAsync(new Uri(host.Address("https"), "tls"))).ShouldStartWith("https|True|");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_https_url_on_the_command_line_takes_the_default_certificate_of_the_configuration()
    {
        (string certificate, string key) = _files.WritePem(TestCertificates.Server, "server");
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Certificates:Default:Path"] = certificate,
            ["Certificates:Default:KeyPath"] = key,
            ["EndpointDefaults:Protocols"] = "Http1",
        }, args: ["--urls", "https://127.0.0.1:0"]);

        host.Addresses.Single().Scheme.ShouldBe("https");
        (await host.Http.GetStringAsync("tls")).ShouldStartWith("https|True|");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task SNI_chooses_the_certificate_by_the_host_name_the_client_sends()
    {
        X509Certificate2 exact = TestCertificates.CreateServer("a.test");
        X509Certificate2 wildcard = TestCertificates.CreateServer("x.wild.test");
        X509Certificate2 other = TestCertificates.CreateServer("other.test");
        (string exactPem, string exactKey) = _files.WritePem(exact, "exact");
        (string wildcardPem, string wildcardKey) = _files.WritePem(wildcard, "wildcard");
        (string otherPem, string otherKey) = _files.WritePem(other, "other");
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Endpoints:Secure:Url"] = "https://127.0.0.1:0",
            ["Endpoints:Secure:Protocols"] = "Http1",
            ["Endpoints:Secure:Sni:a.test:Certificate:Path"] = exactPem,
            ["Endpoints:Secure:Sni:a.test:Certificate:KeyPath"] = exactKey,
            ["Endpoints:Secure:Sni:*.wild.test:Certificate:Path"] = wildcardPem,
            ["Endpoints:Secure:Sni:*.wild.test:Certificate:KeyPath"] = wildcardKey,
            ["Endpoints:Secure:Sni:*:Certificate:Path"] = otherPem,
            ["Endpoints:Secure:Sni:*:Certificate:KeyPath"] = otherKey,
        });

        IPEndPoint endPoint = host.EndPointOf("https");
        (await PresentedCertificateAsync(endPoint, "a.test")).ShouldBe(exact.Thumbprint);
        (await PresentedCertificateAsync(endPoint, "x.wild.test")).ShouldBe(wildcard.Thumbprint);
        (await PresentedCertificateAsync(endPoint, "deep.x.wild.test")).ShouldBe(wildcard.Thumbprint);
        (await PresentedCertificateAsync(endPoint, "unknown.test")).ShouldBe(other.Thumbprint);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task SslProtocols_from_configuration_limit_the_TLS_versions_an_endpoint_accepts()
    {
        (string certificate, string key) = _files.WritePem(TestCertificates.Server, "server");
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Endpoints:Secure:Url"] = "https://127.0.0.1:0",
            ["Endpoints:Secure:Protocols"] = "Http1",
            ["Endpoints:Secure:SslProtocols:0"] = "Tls13",
            ["Endpoints:Secure:Certificate:Path"] = certificate,
            ["Endpoints:Secure:Certificate:KeyPath"] = key,
        });

        IPEndPoint endPoint = host.EndPointOf("https");
        (await PresentedCertificateAsync(endPoint, "localhost", SslProtocols.Tls13)).ShouldBe(TestCertificates.Server.Thumbprint);
        await Should.ThrowAsync<Exception>(() => PresentedCertificateAsync(endPoint, "localhost", SslProtocols.Tls12));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_certificate_required_in_code_is_validated_and_reaches_the_application()
    {
        X509Certificate2 client = TestCertificates.CreateClient("falconet-client");
        X509Certificate2 stranger = TestCertificates.CreateClient("stranger");
        await using AspNetTestApp host = await StartAsync(new() { ["EndpointDefaults:Protocols"] = "Http1" }, builder =>
        {
            // The code API of each server for the TLS settings of https addresses.
            if (Server == WebServer.Kestrel)
            {
                builder.WebHost.ConfigureKestrel(kestrel => kestrel.ConfigureHttpsDefaults(https =>
                {
                    https.ServerCertificate = TestCertificates.Server;
                    https.ClientCertificateMode = Microsoft.AspNetCore.Server.Kestrel.Https.ClientCertificateMode.RequireCertificate;
                    https.ClientCertificateValidation = (certificate, _, _) => certificate.Thumbprint == client.Thumbprint;
                }));
            }
            else
            {
                builder.WebHost.ConfigureFalconetHttpsDefaults(tls =>
                {
                    tls.ServerCertificate = TestCertificates.Server;
                    tls.ClientCertificateMode = Falconet.Server.ClientCertificateMode.RequireCertificate;
                    tls.ClientCertificateValidation = (certificate, _, _) => certificate.Thumbprint == client.Thumbprint;
                });
            }
        }, args: ["--urls", "https://127.0.0.1:0"]);

        using (HttpClient withCertificate = ClientWith(client))
        {
            (await withCertificate.GetStringAsync(new Uri(host.BaseAddress, "tls"))).ShouldEndWith("|CN=falconet-client|tls-feature");
        }

        using (HttpClient withStranger = ClientWith(stranger))
        {
            await Should.ThrowAsync<HttpRequestException>(() => withStranger.GetStringAsync(new Uri(host.BaseAddress, "tls")));
        }

        using HttpClient without = ClientWith(null);
        await Should.ThrowAsync<HttpRequestException>(() => without.GetStringAsync(new Uri(host.BaseAddress, "tls")));
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_https_endpoint_added_in_code_is_bound_and_serves()
    {
        await using AspNetTestApp host = await StartAsync(new(), builder =>
        {
            if (Server == WebServer.Kestrel)
            {
                builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0, listen =>
                {
                    listen.Protocols = Microsoft.AspNetCore.Server.Kestrel.Core.HttpProtocols.Http1;
                    listen.UseHttps(TestCertificates.Server);
                }));
            }
            else
            {
                builder.WebHost.ConfigureFalconet(options =>
                    options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), TestCertificates.Server)));
            }
        });

        host.Addresses.Single().Scheme.ShouldBe("https");
        (await host.Http.GetStringAsync("tls")).ShouldStartWith("https|True|");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task curl_fetches_over_https_trusting_the_certificate_as_its_authority()
    {
        (string certificate, string key) = _files.WritePem(TestCertificates.Server, "server");
        await using AspNetTestApp host = await StartAsync(new()
        {
            ["Endpoints:Secure:Url"] = "https://127.0.0.1:0",
            ["Endpoints:Secure:Protocols"] = "Http1",
            ["Endpoints:Secure:Certificate:Path"] = certificate,
            ["Endpoints:Secure:Certificate:KeyPath"] = key,
        });

        int port = host.Address("https").Port;
        string output = await RunAsync("curl", "--silent", "--show-error", "--http1.1", "--cacert", certificate,
            "--resolve", $"localhost:{port}:127.0.0.1", $"https://localhost:{port}/tls");
        output.ShouldBe($"https|True|Tls13|{HostNameOf("localhost")}|suite|http/1.1|-|tls-feature");
    }

    /// <summary>Completes a TLS handshake with SslStream and returns the thumbprint of the certificate the server presented.</summary>
    private static async Task<string> PresentedCertificateAsync(IPEndPoint endPoint, string hostName, SslProtocols protocols = SslProtocols.None)
    {
        using var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(endPoint);
        await using var tls = new SslStream(new NetworkStream(socket, ownsSocket: false));
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = hostName,
            EnabledSslProtocols = protocols,
            ApplicationProtocols = [SslApplicationProtocol.Http11],
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        }).WaitAsync(TestTimeouts.Operation);
        return tls.RemoteCertificate!.GetCertHashString();
    }

    private static HttpClient ClientWith(X509Certificate2? certificate)
    {
        SslClientAuthenticationOptions ssl = TestCertificates.ClientOptions();
        if (certificate is not null)
        {
            ssl.ClientCertificates = new X509CertificateCollection { certificate };
        }

        return new HttpClient(new SocketsHttpHandler { SslOptions = ssl }) { Timeout = TestTimeouts.Operation };
    }

    internal static async Task<string> RunAsync(string program, params string[] arguments)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(TestTimeouts.Operation);
        process.ExitCode.ShouldBe(0, await error);
        return await output;
    }
}

public sealed class HttpsTestsOnKestrel : HttpsTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class HttpsTestsOnFalconetSockets : HttpsTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class HttpsTestsOnFalconetLibuv : HttpsTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;
}
