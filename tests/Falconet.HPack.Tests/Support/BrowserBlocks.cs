namespace Falconet.HPack.Tests.Support;

/// <summary>
/// A Chromium navigation as Chromium encodes it: pseudo-headers first, every field with incremental indexing and
/// Huffman-coded strings, static names where the table has them; and the next navigation on the connection, where every
/// field is an index into the dynamic table but the path, a literal without indexing, so the block can be decoded again
/// and again against the same table.
/// </summary>
internal static class BrowserBlocks
{
    private static readonly (string Name, string Value, int NameIndex)[] s_fields =
    [
        (":authority", "www.example.com", 1),
        (":scheme", "https", 0),
        (":path", "/articles/hpack-in-practice?ref=home", 4),
        ("sec-ch-ua", "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\", \"Google Chrome\";v=\"131\"", 0),
        ("sec-ch-ua-mobile", "?0", 0),
        ("sec-ch-ua-platform", "\"Linux\"", 0),
        ("upgrade-insecure-requests", "1", 0),
        ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 58),
        ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7", 19),
        ("sec-fetch-site", "same-origin", 0),
        ("sec-fetch-mode", "navigate", 0),
        ("sec-fetch-user", "?1", 0),
        ("sec-fetch-dest", "document", 0),
        ("referer", "https://www.example.com/", 51),
        ("accept-encoding", "gzip, deflate, br, zstd", 16),
        ("accept-language", "en-US,en;q=0.9", 17),
        ("cookie", "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark", 32),
        ("priority", "u=0, i", 0),
    ];

    /// <summary>The first request of a connection: the block, and the fields it carries in order.</summary>
    public static (byte[] Block, string[] Fields) First { get; } = Build(first: true);

    /// <summary>The same navigation again (another path): the block, and the fields it carries in order.</summary>
    public static (byte[] Block, string[] Fields) Repeated { get; } = Build(first: false);

    private static (byte[] Block, string[] Fields) Build(bool first)
    {
        var builder = new BlockBuilder();
        var fields = new string[s_fields.Length + 1];
        builder.Indexed(2);
        fields[0] = ":method: GET";

        // Every field but ":scheme: https" (static entry 7) was inserted by the first request.
        int inserted = s_fields.Length - 1;
        for (int i = 0; i < s_fields.Length; i++)
        {
            (string name, string value, int nameIndex) = s_fields[i];
            if (name == ":scheme")
            {
                builder.Indexed(7);
            }
            else if (!first && name != ":path")
            {
                builder.Indexed(Position(i, inserted));
            }
            else if (!first)
            {
                value = "/articles/hpack-in-depth?ref=next";
                builder.Literal(nameIndex, value, indexing: false);
            }
            else if (nameIndex > 0)
            {
                builder.Literal(nameIndex, value);
            }
            else
            {
                builder.Literal(name, value);
            }

            fields[i + 1] = name + ": " + value;
        }

        return (builder.ToArray(), fields);
    }

    // The dynamic index, after the first request, of the i-th field (":scheme" excepted): the table grew in field order.
    private static int Position(int i, int inserted)
    {
        int order = i > 1 ? i - 1 : i; // fields after ":scheme" were inserted one place earlier
        return 61 + inserted - order;
    }
}
