using System;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport.Tls;
using Falconet.Transport.Tls.OpenSsl;
using Microsoft.Extensions.Logging;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// <see cref="TlsEngine.Auto"/>, the default: the OpenSSL engine where it can run and honour every option (this machine, with
/// OpenSSL 3), otherwise SslStream with the reason logged once per endpoint; an explicitly named engine is kept.
/// </summary>
public class TlsAutoEngineTests : ServerTests
{
    private const int EngineChosen = 404;
    private const int EngineFellBack = 405;

    protected override bool Https => true;

    protected override TlsEngine TlsEngine => TlsEngine.Auto;

    /// <summary>Answers with the engine of the connection and the protocol it runs.</summary>
    private static ValueTask DescribeEngine(HttpContext context)
    {
        context.Response.Write(Encoding.ASCII.GetBytes($"{((TlsConnection)context.Transport).Engine} {context.Request.Protocol}"));
        return default;
    }

    private static async Task<string> GetAsync(RawClient client)
    {
        await client.SendAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
        return (await client.ReadResponseAsync()).BodyText;
    }

    [Fact]
    public void Auto_is_the_default_and_the_named_engines_keep_their_values()
    {
        new TlsServerOptions().Engine.ShouldBe(TlsEngine.Auto);
        new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), TestCertificates.Server).Tls.Engine.ShouldBe(TlsEngine.Auto);
        ((int)TlsEngine.SslStream).ShouldBe(0);
        ((int)TlsEngine.OpenSsl).ShouldBe(1);
        ((int)TlsEngine.Auto).ShouldBe(2);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Auto_runs_the_OpenSSL_engine_here_and_logs_the_choice_once_per_endpoint()
    {
        // This machine runs the OpenSSL engine's own suites: Auto must pick it.
        OpenSslSupport.UnavailableReason.ShouldBeNull();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(DescribeEngine, options =>
        {
            options.LoggerFactory = logs;
            options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), TestCertificates.Server));
        });
        host.Server.Options.HttpsEndpoints.ShouldAllBe(endpoint => endpoint.Tls.Engine == TlsEngine.Auto);
        host.Server.HttpsEngines.ShouldBe([TlsEngine.OpenSsl, TlsEngine.OpenSsl]);

        foreach (IPEndPoint endpoint in host.Server.BoundHttpsEndpoints)
        {
            using RawClient client = RawClient.ConnectTls(endpoint);
            (await GetAsync(client)).ShouldBe("OpenSsl HTTP/1.1");
            logs.Entries.Where(entry => entry.EventId == EngineChosen && entry.Message == $"HTTPS on https://{endpoint}: TLS engine OpenSsl (auto)")
                .ShouldHaveSingleItem().Level.ShouldBe(LogLevel.Information);
        }

        logs.Entries.Count(entry => entry.EventId == EngineChosen).ShouldBe(2);
        logs.Contains(EngineFellBack).ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Auto_serves_HTTP_2_by_ALPN_on_the_OpenSSL_engine()
    {
        await using TestServer host = await StartServerAsync(DescribeEngine);
        using Http2Client client = Http2Client.Connect(host);
        await client.StartAsync();

        await client.WriteHeadersAsync(1, Http2Client.Request(), endStream: true);
        Http2Response response = await client.ReadResponseAsync(1);

        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("OpenSsl HTTP/2");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    [SupportedOSPlatform("linux")] // RSAOpenSsl, libcrypto.
    public async Task Auto_with_a_private_key_that_cannot_be_exported_serves_on_SslStream_and_logs_why()
    {
        using X509Certificate2 certificate = CertificateWithUnexportableKey("no-export.test", out RSAOpenSsl signer);
        using (signer)
        {
            var logs = new RecordingLoggerFactory();
            await using TestServer host = await StartServerAsync(DescribeEngine, options =>
            {
                options.LoggerFactory = logs;
                options.HttpsEndpoints[0].Tls.ServerCertificate = certificate;
            });

            // The handshake signs with the key in its store, which SslStream can use and OpenSSL could not be given.
            using RawClient client = RawClient.ConnectTls(host.EndPoint, options: TestCertificates.ClientOptions("no-export.test", trusted: certificate));
            (await GetAsync(client)).ShouldBe("SslStream HTTP/1.1");

            RecordingLoggerFactory.LogEntry fellBack = logs.Entries.Where(entry => entry.EventId == EngineFellBack).ShouldHaveSingleItem();
            fellBack.Level.ShouldBe(LogLevel.Information);
            fellBack.Message.ShouldStartWith($"HTTPS on https://{host.EndPoint}: TLS engine SslStream (auto), not OpenSsl: ");
            fellBack.Message.ShouldContain("CN=no-export.test");
            fellBack.Message.ShouldContain(certificate.Thumbprint);
            fellBack.Message.ShouldContain("cannot be exported");
            logs.Contains(EngineChosen).ShouldBeFalse();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    [SupportedOSPlatform("linux")]
    public async Task An_explicit_OpenSsl_engine_with_such_a_key_still_fails_the_start()
    {
        using X509Certificate2 certificate = CertificateWithUnexportableKey("no-export.test", out RSAOpenSsl signer);
        using (signer)
        {
            var options = new FalconetServerOptions { Transport = Transport };
            options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0),
                new TlsServerOptions { ServerCertificate = certificate, Engine = TlsEngine.OpenSsl }));
            await using var server = new FalconetServer(options, DescribeEngine);

            string message = (await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync())).Message;
            message.ShouldContain("https://127.0.0.1:0");
            message.ShouldContain("cannot be exported");
            server.BoundHttpsEndpoints.ShouldBeEmpty();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Auto_where_libssl_cannot_be_used_serves_on_SslStream_and_logs_why()
    {
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(DescribeEngine, options =>
        {
            options.LoggerFactory = logs;
            options.HttpsEndpoints[0].Tls.OpenSslUnavailableReason = "libssl.so.3 cannot be loaded (the test says so)";
        });
        using RawClient client = host.Connect();

        (await GetAsync(client)).ShouldBe("SslStream HTTP/1.1");
        host.Server.HttpsEngines.ShouldBe([TlsEngine.SslStream]);
        logs.Entries.Where(entry => entry.EventId == EngineFellBack).ShouldHaveSingleItem().Message
            .ShouldBe($"HTTPS on https://{host.EndPoint}: TLS engine SslStream (auto), not OpenSsl: libssl.so.3 cannot be loaded (the test says so)");
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(TlsEngine.SslStream)]
    [InlineData(TlsEngine.OpenSsl)]
    public async Task A_named_engine_is_kept_and_logged_as_named(TlsEngine engine)
    {
        var logs = new RecordingLoggerFactory();
        // Not through StartServerAsync, which gives every endpoint the class's engine.
        await using TestServer host = await TestServer.StartAsync(DescribeEngine, options =>
        {
            options.Transport = Transport;
            options.LoggerFactory = logs;
            options.Endpoints.Clear();
            options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), new TlsServerOptions
            {
                ServerCertificate = TestCertificates.Server,
                Engine = engine,

                // Not Auto: the seam must change nothing.
                OpenSslUnavailableReason = "ignored",
            }));
        });
        using RawClient client = host.Connect();

        (await GetAsync(client)).ShouldBe($"{engine} HTTP/1.1");
        host.Server.HttpsEngines.ShouldBe([engine]);
        logs.Entries.Where(entry => entry.EventId == EngineChosen).ShouldHaveSingleItem().Message
            .ShouldBe($"HTTPS on https://{host.EndPoint}: TLS engine {engine} (TlsServerOptions.Engine)");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Auto_with_a_certificate_selector_serves_on_SslStream_and_logs_why()
    {
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(DescribeEngine, options =>
        {
            options.LoggerFactory = logs;
            options.HttpsEndpoints[0].Tls.ServerCertificateSelector = name => name == "localhost" ? TestCertificates.Server : null;
        });
        using RawClient client = host.Connect();

        (await GetAsync(client)).ShouldBe("SslStream HTTP/1.1");
        string message = logs.Entries.Where(entry => entry.EventId == EngineFellBack).ShouldHaveSingleItem().Message;
        message.ShouldStartWith($"HTTPS on https://{host.EndPoint}: TLS engine SslStream (auto), not OpenSsl: ");
        message.ShouldContain("ServerCertificateSelector");

        // The selector still refuses names it does not serve.
        SslClientAuthenticationOptions other = TestCertificates.ClientOptions("other.test");
        Should.Throw<System.Security.Authentication.AuthenticationException>(() => RawClient.ConnectTls(host.EndPoint, options: other).Dispose());
    }

    [Fact]
    public void Auto_with_a_protocol_set_OpenSSL_cannot_express_resolves_to_SslStream_naming_the_option()
    {
#pragma warning disable CS0618, SYSLIB0039 // A gap between versions, which OpenSSL cannot express.
        var options = new TlsServerOptions { ServerCertificate = TestCertificates.Server, EnabledProtocols = System.Security.Authentication.SslProtocols.Tls11 | System.Security.Authentication.SslProtocols.Tls13 };
#pragma warning restore CS0618, SYSLIB0039
        var settings = new TlsServerSettings(options, TimeProvider.System);

        settings.Engine.ShouldBe(TlsEngine.SslStream);
        settings.OpenSsl.ShouldBeNull();
        settings.AutoFallbackReason.ShouldNotBeNull().ShouldContain("EnabledProtocols");
    }

    [Theory]
    [InlineData("0", true)]
    [InlineData("1", false)]
    [InlineData("", false)]
    [InlineData(null, false)]
    public void The_operator_switch_turns_the_engine_off_for_Auto_only_when_it_is_0(string? value, bool off)
    {
        string? reason = OpenSslSupport.SwitchedOff(value);
        if (off)
        {
            reason.ShouldNotBeNull().ShouldContain("FALCONET_TLS_OPENSSL");
        }
        else
        {
            reason.ShouldBeNull();
        }
    }

    [Fact]
    public void The_functions_checked_before_Auto_picks_OpenSSL_are_those_the_engine_calls()
    {
        var imported = typeof(LibSsl).GetMethods(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic)
            .Select(method => (Method: method, Import: method.GetCustomAttribute<LibraryImportAttribute>()))
            .Where(pair => pair.Import is not null)
            .ToLookup(pair => pair.Import!.LibraryName, pair => pair.Import!.EntryPoint ?? pair.Method.Name);

        imported["libssl.so.3"].Order().ShouldBe(OpenSslSupport.SslFunctions.Order());
        imported["libcrypto.so.3"].Order().ShouldBe(OpenSslSupport.CryptoFunctions.Order());
    }

    /// <summary>
    /// A certificate whose private key cannot be exported but signs, as a key kept in a hardware module or an OpenSSL provider
    /// looks to the engine: an RSA key with its modulus, public and private exponents and no prime factors, which OpenSSL
    /// signs with and .NET refuses to export (it exports a private RSA key with all its factors only).
    /// </summary>
    [SupportedOSPlatform("linux")]
    private static X509Certificate2 CertificateWithUnexportableKey(string hostName, out RSAOpenSsl key)
    {
        using var full = RSA.Create(2048);
        var request = new CertificateRequest($"CN={hostName}", full, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName(hostName);
        request.CertificateExtensions.Add(names.Build());
        using X509Certificate2 signed = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        using X509Certificate2 publicOnly = X509CertificateLoader.LoadCertificate(signed.RawData);
        RSAParameters parameters = full.ExportParameters(includePrivateParameters: true);

        nint rsa = RSA_new();
        RSA_set0_key(rsa, BigNumber(parameters.Modulus!), BigNumber(parameters.Exponent!), BigNumber(parameters.D!)).ShouldBe(1);
        nint evp = EVP_PKEY_new();
        EVP_PKEY_set1_RSA(evp, rsa).ShouldBe(1);
        RSA_free(rsa);
        using var handle = new SafeEvpPKeyHandle(evp, ownsHandle: true);
        var signer = new RSAOpenSsl(handle);
        Should.Throw<CryptographicException>(() => signer.ExportPkcs8PrivateKey());
        key = signer;
        return publicOnly.CopyWithPrivateKey(signer);

        static nint BigNumber(byte[] bigEndian) => BN_bin2bn(bigEndian, bigEndian.Length, 0);
    }

    [DllImport("libcrypto.so.3")]
    private static extern nint RSA_new();

    [DllImport("libcrypto.so.3")]
    private static extern void RSA_free(nint rsa);

    [DllImport("libcrypto.so.3")]
    private static extern int RSA_set0_key(nint rsa, nint n, nint e, nint d);

    [DllImport("libcrypto.so.3")]
    private static extern nint BN_bin2bn(byte[] bytes, int length, nint result);

    [DllImport("libcrypto.so.3")]
    private static extern nint EVP_PKEY_new();

    [DllImport("libcrypto.so.3")]
    private static extern int EVP_PKEY_set1_RSA(nint key, nint rsa);
}
