using System;
using System.IO;
using System.Security.Cryptography.X509Certificates;
using Falconet.Http.Tests.Infrastructure;

namespace Falconet.AspNetCore.Tests.Infrastructure;

/// <summary>Certificates written to a temporary folder as a configuration names them: PEM certificate and key, or a PFX with a password.</summary>
internal sealed class CertificateFiles : IDisposable
{
    public CertificateFiles()
    {
        Folder = Directory.CreateTempSubdirectory("falconet-certs-").FullName;
    }

    public string Folder { get; }

    /// <summary>Writes <paramref name="certificate"/> as name.pem and name.key.pem; returns both paths.</summary>
    public (string Certificate, string Key) WritePem(X509Certificate2 certificate, string name)
    {
        string certificatePath = Path.Combine(Folder, name + ".pem");
        string keyPath = Path.Combine(Folder, name + ".key.pem");
        TestCertificates.WritePem(certificate, certificatePath, keyPath);
        return (certificatePath, keyPath);
    }

    /// <summary>Writes <paramref name="certificate"/> with its key as name.pfx, protected by <paramref name="password"/>.</summary>
    public string WritePfx(X509Certificate2 certificate, string name, string password)
    {
        string path = Path.Combine(Folder, name + ".pfx");
        File.WriteAllBytes(path, certificate.Export(X509ContentType.Pkcs12, password));
        return path;
    }

    public void Dispose() => Directory.Delete(Folder, recursive: true);
}
