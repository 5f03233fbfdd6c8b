using System;
using System.IO;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Falconet.Hosting;

/// <summary>
/// Loads server certificates as configuration names them (the schema of Kestrel's <c>Certificate</c> sections): PEM files (a
/// certificate and its key, in one file or two, the key optionally encrypted), a PKCS#12 (PFX) file, or a certificate store
/// by subject; and finds the ASP.NET Core HTTPS development certificate.
/// </summary>
public static class CertificateLoader
{
    /// <summary>The extension that marks the ASP.NET Core HTTPS development certificate (made by <c>dotnet dev-certs https</c>).</summary>
    public const string DevelopmentCertificateOid = "1.3.6.1.4.1.311.84.1.1";

    private const string ServerAuthenticationOid = "1.3.6.1.5.5.7.3.1";

    /// <summary>
    /// A certificate with its private key from a file: <paramref name="keyPath"/> given, a PEM certificate and its PEM key;
    /// otherwise a PEM file that holds both, or a PKCS#12 (PFX) file. <paramref name="password"/> decrypts the PEM key or the PFX.
    /// </summary>
    /// <exception cref="InvalidOperationException">The file is missing, unreadable, or holds no private key; the message names the file.</exception>
    public static X509Certificate2 LoadFromFile(string path, string? keyPath = null, string? password = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        X509Certificate2 certificate;
        try
        {
            if (keyPath is not null)
            {
                certificate = password is null
                    ? X509Certificate2.CreateFromPemFile(path, keyPath)
                    : X509Certificate2.CreateFromEncryptedPemFile(path, password, keyPath);
            }
            else if (IsPem(path))
            {
                certificate = password is null
                    ? X509Certificate2.CreateFromPemFile(path)
                    : X509Certificate2.CreateFromEncryptedPemFile(path, password);
            }
            else
            {
                certificate = X509CertificateLoader.LoadPkcs12FromFile(path, password);
            }
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException or CryptographicException or ArgumentException)
        {
            throw new InvalidOperationException($"The certificate '{path}'{(keyPath is null ? string.Empty : $" with the key '{keyPath}'")} cannot be loaded: {exception.Message}", exception);
        }

        if (!certificate.HasPrivateKey)
        {
            certificate.Dispose();
            throw new InvalidOperationException($"The certificate '{path}' has no private key: give its key (KeyPath) or a PFX that holds it.");
        }

        return certificate;
    }

    /// <summary>
    /// The server certificate whose subject contains <paramref name="subject"/> in a certificate store (as Kestrel's
    /// <c>Subject</c>/<c>Store</c>/<c>Location</c>/<c>AllowInvalid</c>): with a private key, usable for server authentication,
    /// valid now unless <paramref name="allowInvalid"/>; of several, the one that expires last.
    /// </summary>
    /// <exception cref="InvalidOperationException">No such certificate; the message names the subject and the store.</exception>
    public static X509Certificate2 LoadFromStore(string subject, string storeName, StoreLocation location, bool allowInvalid)
    {
        ArgumentException.ThrowIfNullOrEmpty(subject);
        ArgumentException.ThrowIfNullOrEmpty(storeName);
        using var store = new X509Store(storeName, location);
        store.Open(OpenFlags.ReadOnly | OpenFlags.OpenExistingOnly);
        X509Certificate2? found = null;
        foreach (X509Certificate2 candidate in store.Certificates.Find(X509FindType.FindBySubjectName, subject, validOnly: !allowInvalid))
        {
            if (candidate.HasPrivateKey && AllowsServerAuthentication(candidate) && (found is null || candidate.NotAfter > found.NotAfter))
            {
                found = candidate;
            }
        }

        return found ?? throw new InvalidOperationException(
            $"No certificate for '{subject}' with a private key and for server authentication{(allowInvalid ? string.Empty : ", valid now,")} in the store {location}/{storeName}.");
    }

    /// <summary>
    /// The ASP.NET Core HTTPS development certificate where one is installed (the current user's store <c>My</c>, as Kestrel
    /// looks for it): valid now, with its private key; of several, the one that expires last. Null when there is none.
    /// </summary>
    public static X509Certificate2? FindDevelopmentCertificate(TimeProvider? clock = null)
    {
        DateTimeOffset now = (clock ?? TimeProvider.System).GetUtcNow();
        using var store = new X509Store(StoreName.My, StoreLocation.CurrentUser);
        try
        {
            store.Open(OpenFlags.ReadOnly | OpenFlags.OpenExistingOnly);
        }
        catch (CryptographicException)
        {
            // No store at all: nobody ever made a development certificate here.
            return null;
        }

        X509Certificate2? found = null;
        foreach (X509Certificate2 candidate in store.Certificates)
        {
            if (candidate.Extensions[DevelopmentCertificateOid] is not null && candidate.HasPrivateKey
                && candidate.NotBefore <= now && now <= candidate.NotAfter && (found is null || candidate.NotAfter > found.NotAfter))
            {
                found = candidate;
            }
        }

        return found;
    }

    // A PKCS#12 file is DER: it starts with a SEQUENCE (0x30). PEM is text, possibly with comments before its first "-----BEGIN".
    private static bool IsPem(string path)
    {
        using FileStream file = File.OpenRead(path);
        return file.ReadByte() is not (0x30 or -1);
    }

    private static bool AllowsServerAuthentication(X509Certificate2 certificate)
    {
        foreach (X509Extension extension in certificate.Extensions)
        {
            if (extension is X509EnhancedKeyUsageExtension usage)
            {
                foreach (Oid oid in usage.EnhancedKeyUsages)
                {
                    if (oid.Value == ServerAuthenticationOid)
                    {
                        return true;
                    }
                }

                return false;
            }
        }

        // No usage extension: usable for anything.
        return true;
    }
}
