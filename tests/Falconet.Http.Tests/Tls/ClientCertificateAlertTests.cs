using System;
using System.IO;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport.Tls;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// What <c>openssl s_client</c> sees when its client certificate is refused: a missing certificate where one is required,
/// an untrusted one, and one the endpoint's callback refuses, over TLS 1.3 and 1.2. The OpenSSL engine decides during the
/// handshake and sends the alert OpenSSL names; the SslStream engine on Linux closes without an alert (.NET sends none
/// for a refused client certificate there), which these tests pin so that a change shows.
/// </summary>
public class ClientCertificateAlertTests : ServerTests
{
    private const string Request = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

    /// <summary>The alert sent for a certificate that is sent but refused (untrusted, or refused by the callback).</summary>
    private const string RefusedAlert = "alert bad certificate";

    protected override bool Https => true;

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("-tls1_3", "alert certificate required")]
    [InlineData("-tls1_2", "alert handshake failure")]
    public async Task A_client_without_a_certificate_where_one_is_required_gets_an_alert(string version, string alert)
    {
        await using TestServer host = await StartServerAsync(
            _ => default,
            options => options.HttpsEndpoints[0].Tls.ClientCertificateMode = ClientCertificateMode.RequireCertificate);

        string output = await SClientAsync(host, version, client: null);

        ShouldBeRefusedWith(output, alert);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("-tls1_3")]
    [InlineData("-tls1_2")]
    public async Task An_untrusted_client_certificate_gets_an_alert(string version)
    {
        await using TestServer host = await StartServerAsync(
            _ => default,
            options => options.HttpsEndpoints[0].Tls.ClientCertificateMode = ClientCertificateMode.RequireCertificate);
        using X509Certificate2 client = TestCertificates.CreateClient("untrusted-client");

        string output = await SClientAsync(host, version, client);

        ShouldBeRefusedWith(output, RefusedAlert);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("-tls1_3")]
    [InlineData("-tls1_2")]
    public async Task A_client_certificate_the_callback_refuses_gets_an_alert_and_one_it_accepts_is_served(string version)
    {
        using X509Certificate2 accepted = TestCertificates.CreateClient("accepted-client");
        using X509Certificate2 refused = TestCertificates.CreateClient("refused-client");
        await using TestServer host = await StartServerAsync(_ => default, options =>
        {
            TlsServerOptions tls = options.HttpsEndpoints[0].Tls;
            tls.ClientCertificateMode = ClientCertificateMode.AllowCertificate;
            tls.ClientCertificateValidation = (certificate, _, _) => certificate.Thumbprint == accepted.Thumbprint;
        });

        ShouldBeRefusedWith(await SClientAsync(host, version, refused), RefusedAlert);

        (await SClientAsync(host, version, accepted)).ShouldContain("HTTP/1.1 200");
    }

    /// <summary>Not served; on the OpenSSL engine told by <paramref name="alert"/>, on SslStream by no alert at all.</summary>
    private void ShouldBeRefusedWith(string output, string alert)
    {
        output.ShouldNotContain("HTTP/1.1 200");
        if (TlsEngine == TlsEngine.OpenSsl)
        {
            output.ShouldContain(alert, Case.Insensitive, Errors(output));
        }
        else
        {
            output.ShouldNotContain("SSL alert number", Case.Insensitive, Errors(output));
        }
    }

    /// <summary>The lines of s_client's output that report an error (an alert received, a read failed): the failure's message.</summary>
    private static string Errors(string output) =>
        string.Join(Environment.NewLine, Array.FindAll(output.Split('\n'), line => line.Contains("error", StringComparison.OrdinalIgnoreCase)));

    /// <summary>
    /// Runs <c>openssl s_client</c> with <paramref name="client"/> (or none), sends one request and reads until the server
    /// closes (<c>-ign_eof</c>: over TLS 1.3 the server decides after the client's Finished, so the alert comes after it).
    /// </summary>
    private static async Task<string> SClientAsync(TestServer host, string version, X509Certificate2? client)
    {
        string folder = Directory.CreateTempSubdirectory("falconet-client-alert-").FullName;
        try
        {
            string[] arguments = ["s_client", "-connect", host.EndPoint.ToString(), version, "-ign_eof", "-alpn", "http/1.1"];
            if (client is not null)
            {
                string certificate = Path.Combine(folder, "client.pem");
                string key = Path.Combine(folder, "client-key.pem");
                TestCertificates.WritePem(client, certificate, key);
                arguments = [.. arguments, "-cert", certificate, "-key", key];
            }

            (_, string output) = await ToolProcess.RunAsync("openssl", Request, arguments);
            return output;
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }
}

/// <summary>The same refusals on the OpenSSL engine, which decides during the handshake and sends OpenSSL's alert.</summary>
public sealed class ClientCertificateAlertTestsOnOpenSsl : ClientCertificateAlertTests
{
    protected override TlsEngine TlsEngine => TlsEngine.OpenSsl;
}
