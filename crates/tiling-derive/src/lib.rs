//! `#[derive(Tiling)]`: a `#[repr(C)]` tiling struct also emits its C++
//! definition and layout assertions on both sides.
//!
//! The derive accepts a `#[repr(C)]` struct with named fields whose types are
//! `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`, `f32`, `f64` or fixed
//! arrays `[T; N]` of those (with `N` an integer literal greater than zero).
//! Anything else is rejected with a compile error naming the offending item.
//!
//! It generates
//!
//! * `impl crate::tiling::Tiling for Name`, whose `cpp_definition()` returns
//!   the C++ struct with one `static_assert` for the size and one per field
//!   offset (field doc comments become `// ` comments), and
//! * a `const _: () = { ... };` block asserting at compile time that the Rust
//!   size, alignment and field offsets equal the ones computed here with the C
//!   layout rules (natural alignment), so that both sides agree byte for byte.
//!
//! The C++ text needs `<cstdint>` (fixed-width types) and `<cstddef>`
//! (`offsetof`) to be included before it.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput, Expr, Fields, Lit, Type};

/// Derives `crate::tiling::Tiling` for a `#[repr(C)]` struct of primitive
/// fields; see the crate documentation.
#[proc_macro_derive(Tiling)]
pub fn derive_tiling(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// A primitive field type: its C spelling and size (which is also its
/// natural alignment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prim {
    c_name: &'static str,
    size: u64,
}

const PRIMS: &[(&str, Prim)] = &[
    (
        "u8",
        Prim {
            c_name: "uint8_t",
            size: 1,
        },
    ),
    (
        "i8",
        Prim {
            c_name: "int8_t",
            size: 1,
        },
    ),
    (
        "u16",
        Prim {
            c_name: "uint16_t",
            size: 2,
        },
    ),
    (
        "i16",
        Prim {
            c_name: "int16_t",
            size: 2,
        },
    ),
    (
        "u32",
        Prim {
            c_name: "uint32_t",
            size: 4,
        },
    ),
    (
        "i32",
        Prim {
            c_name: "int32_t",
            size: 4,
        },
    ),
    (
        "u64",
        Prim {
            c_name: "uint64_t",
            size: 8,
        },
    ),
    (
        "i64",
        Prim {
            c_name: "int64_t",
            size: 8,
        },
    ),
    (
        "f32",
        Prim {
            c_name: "float",
            size: 4,
        },
    ),
    (
        "f64",
        Prim {
            c_name: "double",
            size: 8,
        },
    ),
];

const SUPPORTED: &str = "u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, or [T; N] of those";

/// C and C++ keywords (and a few reserved macro-like names) that cannot be
/// used as a field or struct name on the C++ side.
const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    "offsetof",
    "_Bool",
    "_Static_assert",
    "_Alignas",
    "_Alignof",
];

/// One laid-out field.
#[derive(Debug)]
struct FieldLayout {
    ident: syn::Ident,
    name: String,
    prim: Prim,
    /// `Some(n)` for `[T; n]`.
    len: Option<u64>,
    offset: u64,
    docs: Vec<String>,
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align) * align
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    let name_str = name.unraw().to_string();

    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => &named.named,
            Fields::Unnamed(_) => {
                return Err(syn::Error::new(
                    data.fields.span(),
                    format!(
                        "derive(Tiling): `{name_str}` is a tuple struct; \
                         only structs with named fields are supported"
                    ),
                ))
            }
            Fields::Unit => {
                return Err(syn::Error::new(
                    name.span(),
                    format!(
                        "derive(Tiling): `{name_str}` is a unit struct; \
                         a tiling struct needs at least one named field"
                    ),
                ))
            }
        },
        Data::Enum(data) => {
            return Err(syn::Error::new(
                data.enum_token.span,
                format!("derive(Tiling): `{name_str}` is an enum; only structs are supported"),
            ))
        }
        Data::Union(data) => {
            return Err(syn::Error::new(
                data.union_token.span,
                format!("derive(Tiling): `{name_str}` is a union; only structs are supported"),
            ))
        }
    };

    let mut errors: Vec<syn::Error> = Vec::new();

    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        errors.push(syn::Error::new(
            input.generics.span(),
            format!("derive(Tiling): `{name_str}` is generic; tiling structs cannot have generics"),
        ));
    }
    if let Err(e) = check_repr(input, &name_str) {
        errors.push(e);
    }
    if CPP_KEYWORDS.contains(&name_str.as_str()) {
        errors.push(syn::Error::new(
            name.span(),
            format!("derive(Tiling): struct name `{name_str}` is a C/C++ keyword"),
        ));
    }
    if fields.is_empty() {
        errors.push(syn::Error::new(
            name.span(),
            format!(
                "derive(Tiling): `{name_str}` has no fields; \
                 empty structs have different sizes in C++ and Rust"
            ),
        ));
    }

    let mut layouts = Vec::new();
    let mut offset = 0u64;
    let mut max_align = 1u64;
    for field in fields {
        let ident = field.ident.clone().expect("named field");
        let field_name = ident.unraw().to_string();
        if CPP_KEYWORDS.contains(&field_name.as_str()) {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "derive(Tiling): field `{field_name}` of `{name_str}` is named like a \
                     C/C++ keyword; rename it"
                ),
            ));
        }
        let (prim, len) = match field_type(&field.ty, &name_str, &field_name) {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let align = prim.size;
        let size = prim.size * len.unwrap_or(1);
        offset = align_up(offset, align);
        max_align = max_align.max(align);
        layouts.push(FieldLayout {
            ident,
            name: field_name,
            prim,
            len,
            offset,
            docs: doc_lines(&field.attrs),
        });
        offset += size;
    }

    let mut errors = errors.into_iter();
    if let Some(mut combined) = errors.next() {
        for e in errors {
            combined.combine(e);
        }
        return Err(combined);
    }

    let total_size = align_up(offset, max_align);
    let cpp = cpp_definition(&name_str, &layouts, total_size);

    let size_msg = format!("{name_str}: size differs from the C layout computed by derive(Tiling)");
    let align_msg =
        format!("{name_str}: alignment differs from the C layout computed by derive(Tiling)");
    let field_asserts = layouts.iter().map(|f| {
        let ident = &f.ident;
        let off = f.offset as usize;
        let msg = format!(
            "{name_str}: offset of {} differs from the C layout computed by derive(Tiling)",
            f.name
        );
        quote_spanned! {ident.span()=>
            ::core::assert!(::core::mem::offset_of!(#name, #ident) == #off, #msg);
        }
    });
    let total_size_usize = total_size as usize;
    let max_align_usize = max_align as usize;

    Ok(quote! {
        #[automatically_derived]
        impl crate::tiling::Tiling for #name {
            const CPP_NAME: &'static str = #name_str;
            fn cpp_definition() -> ::std::string::String {
                ::std::string::String::from(#cpp)
            }
        }

        const _: () = {
            ::core::assert!(::core::mem::size_of::<#name>() == #total_size_usize, #size_msg);
            ::core::assert!(::core::mem::align_of::<#name>() == #max_align_usize, #align_msg);
            #(#field_asserts)*
        };
    })
}

/// Requires `#[repr(C)]`; rejects `packed`, `align(..)` and integer reprs,
/// which the natural-alignment layout computed here does not model.
fn check_repr(input: &DeriveInput, name_str: &str) -> syn::Result<()> {
    let mut has_c = false;
    for attr in &input.attrs {
        if !attr.path().is_ident("repr") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                has_c = true;
                Ok(())
            } else {
                let what = meta
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "?".to_string());
                // Skip any `(...)` argument so parsing can continue.
                if meta.input.peek(syn::token::Paren) {
                    let _content;
                    syn::parenthesized!(_content in meta.input);
                }
                Err(meta.error(format!(
                    "derive(Tiling): `{name_str}` has #[repr({what})]; only plain #[repr(C)] \
                     (natural alignment) is supported"
                )))
            }
        })?;
    }
    if has_c {
        Ok(())
    } else {
        Err(syn::Error::new(
            input.ident.span(),
            format!("derive(Tiling): `{name_str}` must be #[repr(C)]"),
        ))
    }
}

fn prim_of(ty: &Type) -> Option<Prim> {
    let Type::Path(tp) = ty else { return None };
    if tp.qself.is_some() {
        return None;
    }
    let segs: Vec<_> = tp.path.segments.iter().collect();
    if segs.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let last = segs.last()?.ident.to_string();
    let prefix_ok = match segs.len() {
        1 => tp.path.leading_colon.is_none(),
        // core::primitive::u32 / std::primitive::u32
        3 => (segs[0].ident == "core" || segs[0].ident == "std") && segs[1].ident == "primitive",
        _ => false,
    };
    if !prefix_ok {
        return None;
    }
    PRIMS.iter().find(|(n, _)| *n == last).map(|(_, p)| *p)
}

fn unsupported(ty: &Type, struct_name: &str, field: &str, extra: &str) -> syn::Error {
    let ty_str = quote!(#ty).to_string();
    syn::Error::new(
        ty.span(),
        format!(
            "derive(Tiling): field `{field}` of `{struct_name}` has unsupported type `{ty_str}`{extra}; \
             supported: {SUPPORTED}"
        ),
    )
}

fn field_type(ty: &Type, struct_name: &str, field: &str) -> syn::Result<(Prim, Option<u64>)> {
    match ty {
        Type::Group(g) => field_type(&g.elem, struct_name, field),
        Type::Paren(p) => field_type(&p.elem, struct_name, field),
        Type::Array(arr) => {
            let Some(prim) = prim_of(&arr.elem) else {
                return Err(unsupported(ty, struct_name, field, " (array element)"));
            };
            let len = array_len(&arr.len).ok_or_else(|| {
                syn::Error::new(
                    arr.len.span(),
                    format!(
                        "derive(Tiling): field `{field}` of `{struct_name}`: the array length \
                         must be an integer literal"
                    ),
                )
            })?;
            if len == 0 {
                return Err(syn::Error::new(
                    arr.len.span(),
                    format!(
                        "derive(Tiling): field `{field}` of `{struct_name}`: zero-length arrays \
                         are not valid C++"
                    ),
                ));
            }
            Ok((prim, Some(len)))
        }
        _ => prim_of(ty)
            .map(|p| (p, None))
            .ok_or_else(|| unsupported(ty, struct_name, field, "")),
    }
}

fn array_len(expr: &Expr) -> Option<u64> {
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(i) => {
                let suffix = i.suffix();
                if suffix.is_empty() || suffix == "usize" {
                    i.base10_parse::<u64>().ok()
                } else {
                    None
                }
            }
            _ => None,
        },
        Expr::Group(g) => array_len(&g.expr),
        Expr::Paren(p) => array_len(&p.expr),
        _ => None,
    }
}

/// The lines of the `///` / `#[doc = ".."]` attributes, with the one leading
/// space of `/// text` removed.
fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            continue;
        };
        // `split`, not `lines`: an empty `///` line is one empty line.
        for line in s.value().split('\n') {
            let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
            lines.push(line.to_string());
        }
    }
    // Block doc comments (`/** .. */`) start and end with empty lines.
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

fn cpp_definition(name: &str, fields: &[FieldLayout], size: u64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "struct {name} {{");
    for f in fields {
        for line in &f.docs {
            if line.is_empty() {
                let _ = writeln!(out, "    //");
            } else {
                // A `*/` or line continuation cannot hurt a `//` comment, but a
                // trailing backslash would swallow the next line.
                let line = line.trim_end_matches('\\');
                let _ = writeln!(out, "    // {line}");
            }
        }
        match f.len {
            Some(n) => {
                let _ = writeln!(out, "    {} {}[{n}];", f.prim.c_name, f.name);
            }
            None => {
                let _ = writeln!(out, "    {} {};", f.prim.c_name, f.name);
            }
        }
    }
    let _ = writeln!(out, "}};");
    let _ = writeln!(
        out,
        "static_assert(sizeof({name}) == {size}, \"{name}: size differs from the Rust definition\");"
    );
    for f in fields {
        let _ = writeln!(
            out,
            "static_assert(offsetof({name}, {field}) == {off}, \"{name}: offset of {field} differs from the Rust definition\");",
            field = f.name,
            off = f.offset,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn err_of(input: DeriveInput) -> String {
        match expand(&input) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    #[test]
    fn layout_with_padding() {
        let input: DeriveInput = parse_quote! {
            #[repr(C)]
            struct T { a: u8, b: u32, c: u16, d: f64, e: [u8; 3] }
        };
        let tokens = expand(&input).unwrap().to_string();
        assert!(tokens.contains("== 32usize"), "{tokens}");
    }

    #[test]
    fn rejects_missing_repr_c() {
        let e = err_of(parse_quote! { struct T { a: u32 } });
        assert!(e.contains("`T` must be #[repr(C)]"), "{e}");
    }

    #[test]
    fn rejects_packed() {
        let e = err_of(parse_quote! { #[repr(C, packed)] struct T { a: u32 } });
        assert!(e.contains("#[repr(packed)]"), "{e}");
        let e = err_of(parse_quote! { #[repr(C, align(16))] struct T { a: u32 } });
        assert!(e.contains("#[repr(align)]"), "{e}");
    }

    #[test]
    fn rejects_enum_tuple_generic() {
        let e = err_of(parse_quote! { #[repr(C)] enum T { A } });
        assert!(e.contains("is an enum"), "{e}");
        let e = err_of(parse_quote! { #[repr(C)] struct T(u32); });
        assert!(e.contains("tuple struct"), "{e}");
        let e = err_of(parse_quote! { #[repr(C)] struct T<X> { a: X } });
        assert!(e.contains("is generic"), "{e}");
    }

    #[test]
    fn rejects_bad_field_types_naming_the_field() {
        let e = err_of(parse_quote! {
            #[repr(C)]
            struct T { ok: u32, p: *const u8, s: String, b: bool, u: usize, n: [[u8; 2]; 2] }
        });
        for f in ["`p`", "`s`", "`b`", "`u`", "`n`"] {
            assert!(
                e.contains(&format!("field {f} of `T` has unsupported type")),
                "{e}"
            );
        }
        assert!(!e.contains("`ok`"), "{e}");
    }

    #[test]
    fn rejects_bad_array_lengths() {
        let e = err_of(parse_quote! { #[repr(C)] struct T { a: [u32; N] } });
        assert!(e.contains("field `a` of `T`: the array length must be an integer literal"));
        let e = err_of(parse_quote! { #[repr(C)] struct T { a: [u32; 0] } });
        assert!(e.contains("zero-length"), "{e}");
    }

    #[test]
    fn rejects_keywords_and_empty() {
        let e = err_of(parse_quote! { #[repr(C)] struct T { r#int: u32 } });
        assert!(
            e.contains("field `int` of `T` is named like a C/C++ keyword"),
            "{e}"
        );
        let e = err_of(parse_quote! { #[repr(C)] struct T {} });
        assert!(e.contains("no fields"), "{e}");
    }

    #[test]
    fn accepts_primitive_paths() {
        let input: DeriveInput = parse_quote! {
            #[repr(C)]
            struct T { a: core::primitive::u32, b: [::std::primitive::u8; 4] }
        };
        expand(&input).unwrap();
        let e = err_of(parse_quote! { #[repr(C)] struct T { a: ::u32 } });
        assert!(e.contains("field `a` of `T` has unsupported type"), "{e}");
    }
}
