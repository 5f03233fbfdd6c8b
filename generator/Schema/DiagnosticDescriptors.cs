using Microsoft.CodeAnalysis;

namespace Falconet.Generator.Schema;

/// <summary>Every diagnostic the generator reports; IDs are stable and documented in docs/diagnostics.md.</summary>
internal static class DiagnosticDescriptors
{
    private const string Category = "Falconet.Generator";

    public static readonly DiagnosticDescriptor InvalidJson = Create(
        "FALC001", "Invalid JSON in header schema", "The header schema is not valid JSON: {0}",
        "Fix the JSON syntax at the reported position; comments and trailing commas are accepted.");

    public static readonly DiagnosticDescriptor UnknownProperty = Create(
        "FALC002", "Unknown property in header schema", "Unknown property '{0}' in {1}",
        "Only the properties described by known-headers.schema.json are allowed.");

    public static readonly DiagnosticDescriptor DuplicateName = Create(
        "FALC003", "Duplicate name in header schema", "{0} '{1}' is already defined{2}",
        "Header names are compared case-insensitively, methods and versions case-sensitively. A header may appear once per file; naming a header of the defaults or of an earlier file extends it instead.");

    public static readonly DiagnosticDescriptor NonTokenCharacter = Create(
        "FALC004", "Name is not an HTTP token", "{0} '{1}' contains the character '{2}' that is not allowed in an RFC 9110 token",
        "Method and header names may contain only letters, digits and !#$%&'*+-.^_`|~.");

    public static readonly DiagnosticDescriptor EmptyName = Create(
        "FALC005", "Empty name in header schema", "{0} name is empty",
        "Give every method and header a name of at least one character.");

    public static readonly DiagnosticDescriptor TooManyHeaders = Create(
        "FALC006", "Too many headers in one collection", "{0} has {1} bit-indexed headers; at most 64 fit in the bit set",
        "Remove headers from the collection; Content-Length is not counted because it is kept outside the bit set.");

    public static readonly DiagnosticDescriptor MethodTooLong = Create(
        "FALC007", "Method too long", "Method '{0}' has {1} characters; the server accepts methods of at most {2}",
        "Shorten the method name or leave it out of the schema; it is then reported as a custom method.");

    public static readonly DiagnosticDescriptor BadVersion = Create(
        "FALC008", "Invalid HTTP version", "Version '{0}' is not of the form HTTP/d.d",
        "A version is exactly 8 characters: HTTP/, a digit, a dot and a digit.");

    public static readonly DiagnosticDescriptor WrongValueType = Create(
        "FALC009", "Wrong value type in header schema", "{0} must be {1}, found {2}",
        "Follow the types of known-headers.schema.json: arrays of strings or objects, booleans for flags.");

    public static readonly DiagnosticDescriptor InvalidKnownValue = Create(
        "FALC010", "Invalid known value", "Known value '{0}' of header '{1}' {2}",
        "A known value is non-empty, has no leading or trailing whitespace and contains only visible ASCII characters, spaces and tabs.");

    public static readonly DiagnosticDescriptor PropertyNameConflict = Create(
        "FALC011", "Generated member name conflict", "{0} '{1}' maps to the member name '{2}', {3}",
        "Methods become enum members and headers become PascalCase properties; rename the entry so its member is unique and not already a member of the generated type.");

    public static readonly DiagnosticDescriptor ContentLengthFlag = Create(
        "FALC012", "Invalid contentLength flag", "Header '{0}' {1}",
        "Only the Content-Length header may set contentLength, at most once per collection.");

    public static readonly DiagnosticDescriptor InternalError = Create(
        "FALC013", "Falconet generator failed", "The Falconet generator failed while {0}: {1}",
        "This is a bug in Falconet.Generator; please report it with the schema that triggers it.");

    public static readonly DiagnosticDescriptor InvalidOption = Create(
        "FALC014", "Invalid Falconet MSBuild option", "MSBuild property {0} has the invalid value '{1}'; {2}",
        "FalconetNamespace must be a dotted C# namespace; FalconetVisibility must be public or internal; FalconetGenerate must be HeaderSet or Runtime.");

    public static readonly DiagnosticDescriptor DuplicateProperty = Create(
        "FALC015", "Duplicate property in header schema", "Property '{0}' appears more than once in {1}",
        "A JSON object of the schema may name each property once; remove or merge the repeated one.");

    public static readonly DiagnosticDescriptor RuntimeOwnsMethods = Create(
        "FALC016", "Methods and versions belong to the Falconet runtime", "{0} '{1}' cannot be added by an app's header schema: the Falconet runtime matches methods and versions, so {2}",
        "An app's *.headers.json adds headers and known values; remove the method or version from it. Requests with another method are still served (KnownMethod.Custom, with HttpRequest.MethodName and MethodBytes).");

    public static readonly DiagnosticDescriptor MisnamedSchemaFile = Create(
        "FALC017", "Header schema file is not read", "'{0}' looks like a header schema but is not read: only AdditionalFiles named *.headers.json are",
        "Rename the file so its name ends in .headers.json (for example team.headers.json).", DiagnosticSeverity.Warning);

    public static readonly DiagnosticDescriptor RuntimeNotReferenced = Create(
        "FALC018", "Falconet runtime not referenced", "'{0}' is not used: an app's header set is generated for the Falconet server, and this project does not reference the Falconet package",
        "Add a PackageReference to Falconet next to Falconet.Generator.");

    public static readonly DiagnosticDescriptor HPackInUserFile = Create(
        "FALC019", "HPACK tables belong to the Falconet runtime", "'hpack' cannot be set in '{0}': the HPACK static table and Huffman code are fixed by RFC 7541 and come from the default schema",
        "Remove the 'hpack' property from the app's *.headers.json. HTTP/2 requests reach the app's headers through the same slots as HTTP/1.1 ones; nothing needs configuring.");

    public static readonly DiagnosticDescriptor HPackStaticTableInvalid = Create(
        "FALC020", "Invalid HPACK static table", "The HPACK static table {0}",
        "The default schema's hpack.staticTable lists the 61 entries of RFC 7541 Appendix A in order, each with its index, a name and, for some, a value.");

    public static readonly DiagnosticDescriptor HPackStaticNameInvalid = Create(
        "FALC021", "HPACK static table name is not a lower-case field name", "HPACK static table name '{0}' {1}",
        "HTTP/2 field names are lower case (RFC 9113 section 8.2.1): a token of lower-case letters, digits and !#$%&'*+-.^_`|~, or a colon and such a token for a pseudo-header.");

    public static readonly DiagnosticDescriptor HuffmanTableInvalid = Create(
        "FALC022", "Invalid HPACK Huffman code table", "The HPACK Huffman code {0}",
        "The default schema's hpack.huffman lists the 257 symbols of RFC 7541 Appendix B in order (0 to 255, then EOS), each with its symbol, code and bit count.");

    public static readonly DiagnosticDescriptor HuffmanCodeInvalid = Create(
        "FALC023", "HPACK Huffman code is not a valid prefix code", "{0}: {1}",
        "The generated decoder needs a complete prefix code: no code may start with another, every bit sequence must start with a code, codes have 1 to 30 bits, and EOS is all ones.");

    /// <summary>The descriptor with the given ID; <see cref="InternalError"/> for an unknown ID.</summary>
    public static DiagnosticDescriptor Find(string id) => id switch
    {
        "FALC001" => InvalidJson,
        "FALC002" => UnknownProperty,
        "FALC003" => DuplicateName,
        "FALC004" => NonTokenCharacter,
        "FALC005" => EmptyName,
        "FALC006" => TooManyHeaders,
        "FALC007" => MethodTooLong,
        "FALC008" => BadVersion,
        "FALC009" => WrongValueType,
        "FALC010" => InvalidKnownValue,
        "FALC011" => PropertyNameConflict,
        "FALC012" => ContentLengthFlag,
        "FALC014" => InvalidOption,
        "FALC015" => DuplicateProperty,
        "FALC016" => RuntimeOwnsMethods,
        "FALC017" => MisnamedSchemaFile,
        "FALC018" => RuntimeNotReferenced,
        "FALC019" => HPackInUserFile,
        "FALC020" => HPackStaticTableInvalid,
        "FALC021" => HPackStaticNameInvalid,
        "FALC022" => HuffmanTableInvalid,
        "FALC023" => HuffmanCodeInvalid,
        _ => InternalError,
    };

    private static DiagnosticDescriptor Create(string id, string title, string message, string description, DiagnosticSeverity severity = DiagnosticSeverity.Error) =>
        new(id, title, message, Category, severity, isEnabledByDefault: true,
            description: description + " See docs/diagnostics.md#" + id.ToLowerInvariant() + ".");
}
