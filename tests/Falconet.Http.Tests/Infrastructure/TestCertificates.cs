using System;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>Certificates made at test time (nothing private is committed): self-signed ECDSA P-256, trusted by pinning.</summary>
internal static class TestCertificates
{
    private static readonly Lazy<X509Certificate2> s_server = new(() => CreateServer("localhost"));

    /// <summary>The server certificate of the HTTPS test servers: localhost and 127.0.0.1.</summary>
    public static X509Certificate2 Server => s_server.Value;

    /// <summary>A self-signed server certificate for <paramref name="hostName"/> (and 127.0.0.1), with its private key.</summary>
    public static X509Certificate2 CreateServer(string hostName)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={hostName}", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName(hostName);
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
    }

    /// <summary>A self-signed client certificate with subject CN=<paramref name="name"/>, with its private key.</summary>
    public static X509Certificate2 CreateClient(string name)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.2")], critical: false));
        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
    }

    /// <summary>Client options that accept only <paramref name="trusted"/> (default: <see cref="Server"/>), offering http/1.1.</summary>
    public static SslClientAuthenticationOptions ClientOptions(string hostName = "localhost", X509Certificate2? trusted = null)
    {
        string expected = (trusted ?? Server).Thumbprint;
        return new SslClientAuthenticationOptions
        {
            TargetHost = hostName,
            ApplicationProtocols = [SslApplicationProtocol.Http11],
            RemoteCertificateValidationCallback = (_, certificate, _, _) =>
                certificate is not null && string.Equals(certificate.GetCertHashString(), expected, StringComparison.OrdinalIgnoreCase),
        };
    }

    /// <summary>Writes <paramref name="certificate"/> and its private key as PEM files, as openssl would make them for the sample.</summary>
    public static void WritePem(X509Certificate2 certificate, string certificatePath, string keyPath)
    {
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        using ECDsa key = certificate.GetECDsaPrivateKey() ?? throw new InvalidOperationException("No ECDSA private key.");
        File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem());
    }
}
