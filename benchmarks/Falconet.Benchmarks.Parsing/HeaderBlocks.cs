using System.Text;

namespace Falconet.Benchmarks.Parsing;

/// <summary>Requests and header blocks the benchmarks parse and scan: what browsers and API clients send.</summary>
public static class HeaderBlocks
{
    /// <summary>The TechEmpower plaintext request (the benchmark's own request shape: request line and 3 headers).</summary>
    public static readonly byte[] TechEmpowerRequest = Encoding.ASCII.GetBytes(
        "GET /plaintext HTTP/1.1\r\n" +
        "Host: server\r\n" +
        "Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n" +
        "Connection: keep-alive\r\n" +
        "\r\n");

    /// <summary>A desktop browser's navigation request: request line and 11 headers.</summary>
    public static readonly byte[] BrowserRequest = Encoding.ASCII.GetBytes(
        "GET /articles/42?ref=home HTTP/1.1\r\n" +
        "Host: www.example.com\r\n" +
        "Connection: keep-alive\r\n" +
        "Upgrade-Insecure-Requests: 1\r\n" +
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36\r\n" +
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
        "Sec-Fetch-Site: same-origin\r\n" +
        "Sec-Fetch-Mode: navigate\r\n" +
        "Accept-Encoding: gzip, deflate, br, zstd\r\n" +
        "Accept-Language: en-US,en;q=0.9\r\n" +
        "Cookie: session=abc123; theme=dark\r\n" +
        "Referer: https://www.example.com/\r\n" +
        "\r\n");

    /// <summary>The browser request with a 4 KiB cookie instead of its short one (a session-heavy site).</summary>
    public static readonly byte[] CookieRequest = Encoding.ASCII.GetBytes(
        Encoding.ASCII.GetString(BrowserRequest).Replace("Cookie: session=abc123; theme=dark", "Cookie: " + LongCookie(4096), System.StringComparison.Ordinal));

    /// <summary>The browser request's header section alone.</summary>
    public static readonly byte[] BrowserHeaders = BrowserRequest[(System.Array.IndexOf(BrowserRequest, (byte)'\n') + 1)..];

    /// <summary>A short API request's header section (TechEmpower plaintext style).</summary>
    public static readonly byte[] ApiHeaders = Encoding.ASCII.GetBytes(
        "Host: server\r\n" +
        "Accept: text/plain,text/html;q=0.9\r\n" +
        "Connection: keep-alive\r\n" +
        "\r\n");

    private static string LongCookie(int length)
    {
        var cookie = new StringBuilder(length);
        for (int i = 0; cookie.Length < length; i++)
        {
            cookie.Append(System.Globalization.CultureInfo.InvariantCulture, $"c{i}=v{i:x8}aabbccddeeff; ");
        }

        return cookie.ToString(0, length);
    }
}
